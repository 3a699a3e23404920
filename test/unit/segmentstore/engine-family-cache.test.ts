/**
 * The family directory cache under pressure. A directory with staged writes not yet durable must stay
 * cached (a directory loaded again from LevelDB lacks them); a directory evicted as it was loaded or
 * resized once let the next update of the family in the same flush build on stale chunks, losing an
 * acknowledged write or writing a key into the wrong chunk. The budgets here are tiny so that every
 * set evicts; the same happened at the default 16 MiB with one family of ~4,000 chunks and a 2 KB name.
 */
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ByteLru } from '../../../segmentstore/storage/byte-lru';
import { SegmentEngine } from '../../../segmentstore/storage/segment-engine';
import type { SegmentEngineOptions } from '../../../segmentstore/storage/segments/segment-state';
import type { ModificationInput } from '../../../segmentstore/storage/validation';
import { mulberry32 } from '../../harness/oracle';
import { tempDir } from '../../harness/process';

const SEG = '1';
const b = (s: string) => Buffer.from(s);
/** An update putting one key of `family`. */
const put = (family: string, key: string, value: Buffer | string) => ({
  segmentId: SEG,
  modifications: [{ type: 'PUT' as const, family, key: b(key), value: typeof value === 'string' ? b(value) : value }],
});

/** The engine at `where`, its segment created; {@link reopenEngine} opens it again as it is. */
async function openEngine(where: string, options: SegmentEngineOptions): Promise<SegmentEngine> {
  const engine = await reopenEngine(where, options);
  await engine.createSegment(SEG);
  return engine;
}

function reopenEngine(where: string, options: SegmentEngineOptions): Promise<SegmentEngine> {
  return SegmentEngine.open(where, { expirySweepIntervalMs: 0, maxHoldMs: 1000, ...options });
}

/** Every [key, value hex] of `family`, in order, paging through the engine's iterator. */
async function readFamily(engine: SegmentEngine, family: string): Promise<[string, string][]> {
  const got: [string, string][] = [];
  let after: Buffer | undefined;
  for (;;) {
    const page = await engine.iterate({ segmentId: SEG, family, maxItems: 97, includeValues: true, hasAfter: after !== undefined, after });
    for (const item of page.items) got.push([Buffer.from(item.key).toString(), Buffer.from(item.value).toString('hex')]);
    if (page.done || page.items.length === 0) return got;
    after = Buffer.from(page.items[page.items.length - 1].key);
  }
}

/**
 * Holds the next LevelDB iterator `engine` opens: it is opened on LevelDB (the real iterator) only once
 * the function returned is called, so it reads what LevelDB then holds unless it was given a snapshot
 * (an iterator opened at once would read its own instant even without one).
 */
function holdNextIterator(engine: SegmentEngine): () => void {
  const db = (engine as unknown as { db: { iterator: (o: unknown) => { all: () => Promise<unknown> } } }).db;
  const iterator = db.iterator.bind(db);
  let release!: () => void;
  const held = new Promise<void>((resolve) => (release = resolve));
  db.iterator = (o: unknown) => {
    db.iterator = iterator;
    return { all: async () => (await held, iterator(o).all()) } as ReturnType<typeof iterator>;
  };
  return release;
}

describe('ByteLru', () => {
  it('never evicts the entry being set or resized, even over budget; pinned entries stay too', () => {
    const lru = new ByteLru<{ pin: boolean }>(10, (v) => v.pin);
    lru.set('a', { pin: false }, 4);
    lru.set('p', { pin: true }, 6);
    lru.set('big', { pin: false }, 50);
    expect([...lru.values()]).toHaveLength(2); // 'a' went; the pinned one and the new one stay
    expect(lru.peek('big')).toBeDefined();
    expect(lru.peek('p')).toBeDefined();
    lru.set('c', { pin: false }, 1);
    expect(lru.peek('big')).toBeUndefined(); // no longer the one being set
    lru.resize('c', 100);
    expect(lru.peek('c')).toBeDefined();
    expect(lru.bytes).toBe(106);
  });
});

describe('family directories evicted while their writes are staged', () => {
  it('keeps both writes of a new family staged in one flush (directory budget 1 byte)', async () => {
    using dir = tempDir('kvt-dircache-');
    const engine = await openEngine(path.join(dir.path, 'db'), { directoryCacheBytes: 1 });
    try {
      const put = (k: string) => ({ segmentId: SEG, modifications: [{ type: 'PUT' as const, family: 'f', key: b(k), value: b(`v${k}`) }] });
      const acked = await Promise.all(engine.withHeldCommits((update) => [update(put('a')), update(put('b'))]));
      expect(acked.map((o) => o.firstSequence)).toEqual([1, 2]);
      const got = await engine.get({
        segmentId: SEG,
        keys: [
          { family: 'f', key: b('a') },
          { family: 'f', key: b('b') },
        ],
      });
      expect(got.entries.map((e) => e.found)).toEqual([true, true]);
      expect((await readFamily(engine, 'f')).map(([k]) => k)).toEqual(['a', 'b']);
    } finally {
      await engine.close();
    }
  });

  it('keeps a chunk split staged in one flush with a write next to it (directory budget 1 byte)', async () => {
    using dir = tempDir('kvt-dircache-');
    const engine = await openEngine(path.join(dir.path, 'db'), { directoryCacheBytes: 1 });
    try {
      const big = Buffer.alloc(9000, 7);
      const key = (i: number) => b(`k${String(i).padStart(4, '0')}`);
      // One entry per chunk (9 KB values), then two updates in one flush around k0100.
      for (let i = 0; i < 20; i++) await engine.update({ segmentId: SEG, modifications: [{ type: 'PUT', family: 'f', key: key(i * 10), value: big }] });
      const split = { segmentId: SEG, modifications: [{ type: 'PUT' as const, family: 'f', key: key(105), value: big }] };
      const beside = { segmentId: SEG, modifications: [{ type: 'PUT' as const, family: 'f', key: key(107), value: b('small') }] };
      await Promise.all(engine.withHeldCommits((update) => [update(split), update(beside)]));
      const got = await engine.get({
        segmentId: SEG,
        keys: [
          { family: 'f', key: key(105) },
          { family: 'f', key: key(107) },
        ],
      });
      expect(got.entries.map((e) => e.found)).toEqual([true, true]);
      const keys = (await readFamily(engine, 'f')).map(([k]) => k);
      expect(keys).toEqual([...keys].sort());
      expect(keys).toHaveLength(22);
    } finally {
      await engine.close();
    }
  });

  // Random batches (puts of small and chunk-filling values, removes, range removes, sorted or not) to
  // two families, several per flush, against a model applied in arrival order.
  for (const [name, options] of [
    ['directory budget 1 byte', { directoryCacheBytes: 1 }],
    ['directory budget 2 KiB, chunk cache 1 byte', { directoryCacheBytes: 2048, chunkCacheBytes: 1 }],
    ['default caches', {}],
  ] as const) {
    it(`matches a model of concurrent updates, ${name}`, async () => {
      for (const seed of [1, 2, 3]) {
        using dir = tempDir('kvt-dircache-');
        const engine = await openEngine(path.join(dir.path, 'db'), { maxFlushOps: 16, ...options });
        try {
          const rand = mulberry32(seed);
          const model = new Map<string, Map<string, string>>([
            ['a', new Map()],
            ['b', new Map()],
          ]);
          const keyOf = () => `k${String(Math.floor(rand() * 600)).padStart(4, '0')}`;
          for (let round = 0; round < 30; round++) {
            const updates: ModificationInput[][] = [];
            for (let u = 1 + Math.floor(rand() * 12); u > 0; u--) {
              const family = rand() < 0.5 ? 'a' : 'b';
              const mods: ModificationInput[] = [];
              const used = new Set<string>();
              for (let i = 1 + Math.floor(rand() * 40); i > 0; i--) {
                const r = rand();
                if (r < 0.03) {
                  const [from, to] = [keyOf(), keyOf()].sort();
                  mods.push({ type: 'REMOVE_RANGE', family, rangeFrom: b(from), rangeTo: b(to) });
                  continue;
                }
                const k = keyOf();
                if (used.has(k)) continue;
                used.add(k);
                if (r < 0.25) mods.push({ type: 'REMOVE', family, key: b(k) });
                else mods.push({ type: 'PUT', family, key: b(k), value: Buffer.alloc(Math.floor(rand() * (rand() < 0.1 ? 6000 : 200)), `${round}.${k}`) });
              }
              if (rand() < 0.5) mods.sort((x, y) => Buffer.compare(Buffer.from(x.key ?? []), Buffer.from(y.key ?? [])));
              updates.push(mods);
            }
            for (const mods of updates) {
              for (const m of mods) {
                const f = model.get(m.family!)!;
                if (m.type === 'PUT') f.set(Buffer.from(m.key!).toString(), Buffer.from(m.value!).toString('hex'));
                else if (m.type === 'REMOVE') f.delete(Buffer.from(m.key!).toString());
                else for (const k of [...f.keys()]) if (k >= Buffer.from(m.rangeFrom!).toString() && k < Buffer.from(m.rangeTo!).toString()) f.delete(k);
              }
            }
            const sent =
              rand() < 0.5
                ? engine.withHeldCommits((update) => updates.map((modifications) => update({ segmentId: SEG, modifications })))
                : updates.map((modifications) => engine.update({ segmentId: SEG, modifications }));
            // Point reads sent with the updates (answered from the overlay, or from LevelDB where a
            // chunk is not rewritten: those chunks join the cache), then after them, one key per get
            // and all in one: these must match the model whatever earlier reads put in the cache.
            const keys = Array.from({ length: 8 }, () => ({ family: rand() < 0.5 ? 'a' : 'b', key: b(keyOf()) }));
            const early = engine.get({ segmentId: SEG, keys });
            await Promise.all(sent);
            expect((await early).entries).toHaveLength(keys.length);
            const want = keys.map(({ family, key }) => model.get(family)!.get(key.toString()) ?? null);
            const hex = (e: { found: boolean; value: Uint8Array }): string | null => (e.found ? Buffer.from(e.value).toString('hex') : null);
            const singles = await Promise.all(keys.map((k) => engine.get({ segmentId: SEG, keys: [k] })));
            expect(
              singles.map((g) => hex(g.entries[0])),
              `seed ${seed}, round ${round}: single gets`,
            ).toEqual(want);
            expect((await engine.get({ segmentId: SEG, keys })).entries.map(hex), `seed ${seed}, round ${round}: one get`).toEqual(want);
          }
          for (const [family, entries] of model) {
            expect(await readFamily(engine, family), `seed ${seed}, family ${family}`).toEqual([...entries].sort(([x], [y]) => (x < y ? -1 : 1)));
          }
        } finally {
          await engine.close();
        }
      }
    }, 120_000);
  }
});

describe('updates that arrive together at a family not in memory', () => {
  // Each reads the chunks it needs as it arrives, before its turn (FamilyStore.stage); what the ones
  // before it wrote since must win over what it read.
  for (const [name, options] of [
    ['a reopened store (no directory in memory)', {}],
    ['directories and chunks evicted at every set', { directoryCacheBytes: 1, chunkCacheBytes: 1 }],
  ] as const) {
    it(`keeps every write of a chunk they both change: ${name}`, async () => {
      using dir = tempDir('kvt-early-');
      const where = path.join(dir.path, 'db');
      let engine = await openEngine(where, options);
      try {
        // A family of three chunks (128 entries each at most): keys k000-k299.
        const keys = Array.from({ length: 300 }, (_, i) => `k${String(i).padStart(3, '0')}`);
        const mods = keys.map((k) => ({ type: 'PUT' as const, family: 'f', key: b(k), value: b('old') }));
        for (let i = 0; i < mods.length; i += 100) await engine.update({ segmentId: SEG, modifications: mods.slice(i, i + 100) });
        await engine.close();
        engine = await reopenEngine(where, options);
        // Three updates of the first chunk and one of the last, sent in one turn, each a new key and a changed one.
        const updates = [
          ['k000', 'k000a'],
          ['k001', 'k001a'],
          ['k002', 'k002a'],
          ['k299', 'k299a'],
        ].map(([changed, added]) => ({
          segmentId: SEG,
          modifications: [
            { type: 'PUT' as const, family: 'f', key: b(changed), value: b('new') },
            { type: 'PUT' as const, family: 'f', key: b(added), value: b('new') },
          ],
        }));
        await Promise.all(updates.map((u) => engine.update(u)));
        const expected = new Map(keys.map((k) => [k, 'old']));
        for (const u of updates) for (const m of u.modifications) expected.set(m.key.toString(), 'new');
        const want = [...expected].sort(([x], [y]) => (x < y ? -1 : 1)).map(([k, v]) => [k, Buffer.from(v).toString('hex')]);
        expect(await readFamily(engine, 'f')).toEqual(want);
        await engine.close();
        engine = await reopenEngine(where, options);
        expect(await readFamily(engine, 'f')).toEqual(want);
      } finally {
        await engine.close();
      }
    });
  }
});

describe('chunks read by point gets', () => {
  /** Counts the engine's synchronous LevelDB reads (what a point get of a chunk not in memory does); nothing is faked. */
  function countReads(engine: SegmentEngine): { count: number } {
    const db = (engine as unknown as { db: { getSync: (key: Buffer, options?: unknown) => unknown } }).db;
    const getSync = db.getSync.bind(db);
    const counter = { count: 0 };
    db.getSync = (key: Buffer, options?: unknown) => {
      counter.count++;
      return getSync(key, options);
    };
    return counter;
  }

  it('answers a family read again from memory, and a write of it after that from the write', async () => {
    using dir = tempDir('kvt-chunkread-');
    const where = path.join(dir.path, 'db');
    let engine = await openEngine(where, {});
    for (const family of ['f', 'g']) for (const k of ['a', 'b', 'c']) await engine.update(put(family, k, `${family}${k}1`));
    await engine.close();
    // Reopened: nothing of the families in memory, every chunk in LevelDB only.
    engine = await SegmentEngine.open(where, { expirySweepIntervalMs: 0 });
    try {
      const reads = countReads(engine);
      const get = async (family: string, key: string) => {
        const e = (await engine.get({ segmentId: SEG, keys: [{ family, key: b(key) }] })).entries[0];
        return e.found ? Buffer.from(e.value).toString() : null;
      };
      expect(await get('f', 'a')).toBe('fa1');
      expect(reads.count).toBe(1);
      expect([await get('f', 'b'), await get('f', 'c'), await get('f', 'z')]).toEqual(['fb1', 'fc1', null]);
      expect(reads.count).toBe(1); // the chunk read first answers them all
      await engine.update(put('f', 'b', 'fb2'));
      expect(await get('f', 'b')).toBe('fb2');
      expect(await get('g', 'b')).toBe('gb1');
      expect(reads.count).toBe(2); // g's chunk; f's came with its write
      // A Get of both families, and the write it is sent with: every answer as of one instant.
      const [, both] = await Promise.all([
        engine.update(put('g', 'c', 'gc2')),
        engine.get({
          segmentId: SEG,
          keys: [
            { family: 'g', key: b('c') },
            { family: 'f', key: b('b') },
          ],
        }),
      ]);
      expect(both.entries.map((e) => Buffer.from(e.value).toString())).toEqual(['gc2', 'fb2']);
      expect(await get('g', 'c')).toBe('gc2');
    } finally {
      await engine.close();
    }
  });
});

describe('chunks read by a Get that waits in between', () => {
  it('does not cache what it read after waiting: a write committed meanwhile stays what later reads see', async () => {
    using dir = tempDir('kvt-chunkread-');
    const where = path.join(dir.path, 'db');
    let engine = await openEngine(where, {});
    // 'm': one 9 KB entry per chunk, so several chunks; 'p': one small chunk.
    for (let i = 0; i < 6; i++) await engine.update(put('m', `k${i}`, Buffer.alloc(9000, i)));
    await engine.update(put('p', 'x', 'old'));
    await engine.close();
    engine = await SegmentEngine.open(where, { expirySweepIntervalMs: 0 });
    try {
      // The reverse seek for 'm''s floor chunk (its directory is not in memory: the first iterator
      // opened) is held until the write of 'p' is durable and applied to LevelDB (a page of the
      // segment's family-less keys applies its writes first).
      const release = holdNextIterator(engine);
      // 64 keys (one slice) whose first needs the seek, then 'p''s, read in the next slice.
      const keys = [{ family: 'm', key: b('k3') }, ...Array.from({ length: 63 }, (_, i) => ({ family: `n${i}`, key: b('x') })), { family: 'p', key: b('x') }];
      const reading = engine.get({ segmentId: SEG, keys });
      await engine.update(put('p', 'x', 'new'));
      expect((await engine.iterate({ segmentId: SEG, family: '', maxItems: 1, includeValues: true, hasAfter: false })).items).toEqual([]);
      release();
      const got = await reading;
      expect(got.entries[0].value).toEqual(Buffer.alloc(9000, 3));
      expect(Buffer.from(got.entries[64].value).toString()).toBe('old'); // as of the Get's instant
      const after = await engine.get({ segmentId: SEG, keys: [{ family: 'p', key: b('x') }] });
      expect(Buffer.from(after.entries[0].value).toString()).toBe('new');
      expect(await readFamily(engine, 'p')).toEqual([['x', b('new').toString('hex')]]);
    } finally {
      await engine.close();
    }
  });
});

describe('a Get that seeks a floor chunk', () => {
  it('answers the instant it located its keys, not a write applied while it sought', async () => {
    using dir = tempDir('kvt-floorread-');
    const where = path.join(dir.path, 'db');
    let engine = await openEngine(where, {});
    // 'm': one 9 KB entry per chunk, so several chunks.
    for (let i = 0; i < 6; i++) await engine.update(put('m', `k${i}`, Buffer.alloc(9000, i)));
    await engine.close();
    engine = await SegmentEngine.open(where, { expirySweepIntervalMs: 0 });
    try {
      // The Get of one key reads 'm''s first chunk in the turn it locates the key (no snapshot
      // needed there) and, the directory not in memory, seeks k3's floor chunk with the first
      // iterator opened, which is opened only once a write of k3 is durable and applied to LevelDB.
      const release = holdNextIterator(engine);
      const reading = engine.get({ segmentId: SEG, keys: [{ family: 'm', key: b('k3') }] });
      await engine.update(put('m', 'k3', Buffer.alloc(9000, 0xee)));
      expect((await engine.iterate({ segmentId: SEG, family: '', maxItems: 1, includeValues: true, hasAfter: false })).items).toEqual([]);
      release();
      expect((await reading).entries[0].value).toEqual(Buffer.alloc(9000, 3)); // as of the Get's instant
      const after = await engine.get({ segmentId: SEG, keys: [{ family: 'm', key: b('k3') }] });
      expect(after.entries[0].value).toEqual(Buffer.alloc(9000, 0xee));
    } finally {
      await engine.close();
    }
  });
});

describe('chunks read by iterator pages', () => {
  type Db = { getMany: (keys: Buffer[], options?: unknown) => Promise<(Buffer | undefined)[]>; getSync: (key: Buffer, options?: unknown) => Buffer | undefined };
  const dbOf = (engine: SegmentEngine): Db => (engine as unknown as { db: Db }).db;

  it('answers a family page read again from memory', async () => {
    using dir = tempDir('kvt-pageread-');
    const where = path.join(dir.path, 'db');
    let engine = await openEngine(where, {});
    for (const k of ['a', 'b', 'c']) await engine.update(put('f', k, `f${k}`));
    await engine.close();
    engine = await SegmentEngine.open(where, { expirySweepIntervalMs: 0 });
    try {
      const db = dbOf(engine);
      const getMany = db.getMany.bind(db);
      const getSync = db.getSync.bind(db);
      let reads = 0;
      db.getMany = (keys, options) => ((reads += keys.length), getMany(keys, options));
      db.getSync = (key, options) => (reads++, getSync(key, options));
      const want = ['a', 'b', 'c'].map((k) => [k, b(`f${k}`).toString('hex')]);
      expect(await readFamily(engine, 'f')).toEqual(want);
      expect(reads).toBe(1);
      expect(await readFamily(engine, 'f')).toEqual(want);
      expect(reads).toBe(1); // the first page's chunk, from the cache
    } finally {
      await engine.close();
    }
  });

  // Without the family's directory in memory, the page reads its first chunk in the pass that located
  // it: a write staged right after, then durable and applied to LevelDB (a page of the segment's
  // family-less keys applies its writes first), is not in the page, nor lost to later reads.
  it('reads a family whose directory is not in memory as of the instant it located it', async () => {
    using dir = tempDir('kvt-pageread-');
    const where = path.join(dir.path, 'db');
    let engine = await openEngine(where, {});
    await engine.update(put('q', 'x', 'old'));
    await engine.close();
    engine = await SegmentEngine.open(where, { expirySweepIntervalMs: 0 });
    try {
      const page = engine.iterate({ segmentId: SEG, family: 'q', maxItems: 10, includeValues: true, hasAfter: false });
      await engine.update(put('q', 'x', 'new'));
      expect((await engine.iterate({ segmentId: SEG, family: '', maxItems: 1, includeValues: true, hasAfter: false })).items).toEqual([]);
      expect((await page).items.map((i) => Buffer.from(i.value).toString())).toEqual(['old']);
      expect(await readFamily(engine, 'q')).toEqual([['x', b('new').toString('hex')]]);
      const got = await engine.get({ segmentId: SEG, keys: [{ family: 'q', key: b('x') }] });
      expect(Buffer.from(got.entries[0].value).toString()).toBe('new');
    } finally {
      await engine.close();
    }
  });

  // A page reads the chunks it located beyond its first read after awaits: here 'q''s second chunk
  // (its first holds only keys before the page's start), located by its key (evicted from a chunk
  // cache of one byte), whose read is held until a write of that chunk is durable and applied. What
  // the page read is then older than that write, and must not be what later reads see.
  it('does not cache what a page read when a write of it was applied meanwhile: a chunk of a family in memory, evicted from the chunk cache', async () => {
    using dir = tempDir('kvt-pageread-');
    const where = path.join(dir.path, 'db');
    const engine = await openEngine(where, { chunkCacheBytes: 1 });
    // One 9 KB entry per chunk: chunks [a] and [x].
    await engine.update(put('q', 'a', Buffer.alloc(9000, 'a')));
    await engine.update(put('q', 'x', Buffer.alloc(9000, 'o')));
    await engine.update(put('other', 'y', 'evicts q from the cache'));
    await engine.iterate({ segmentId: SEG, family: '', maxItems: 1, includeValues: true, hasAfter: false });
    try {
      const db = dbOf(engine);
      const getMany = db.getMany.bind(db);
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      let readsHeld = 0;
      db.getMany = (keys, options) => {
        db.getMany = getMany;
        readsHeld++;
        return held.then(() => getMany(keys, options));
      };
      const page = engine.iterate({ segmentId: SEG, family: 'q', maxItems: 1, includeValues: true, hasAfter: true, after: b('b') });
      await engine.update(put('q', 'x', Buffer.alloc(9000, 'n')));
      expect((await engine.iterate({ segmentId: SEG, family: '', maxItems: 1, includeValues: true, hasAfter: false })).items).toEqual([]);
      release();
      expect(readsHeld).toBe(1);
      expect((await page).items.map((i) => Buffer.from(i.value))).toEqual([Buffer.alloc(9000, 'o')]); // as of its instant
      const hex = (c: string) => Buffer.alloc(9000, c).toString('hex');
      expect(await readFamily(engine, 'q')).toEqual([
        ['a', hex('a')],
        ['x', hex('n')],
      ]);
      const got = await engine.get({ segmentId: SEG, keys: [{ family: 'q', key: b('x') }] });
      expect(got.entries[0].value).toEqual(Buffer.alloc(9000, 'n'));
    } finally {
      await engine.close();
    }
  });
});
