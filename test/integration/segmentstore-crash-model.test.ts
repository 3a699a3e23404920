/**
 * A real segment-store process SIGKILLed again and again under mixed workloads, restarted on its data
 * directory each time and checked against the model of what was acknowledged
 * (test/harness/engine-model.ts). Fifteen writers each own a window of 40 keys in one of three
 * families of one segment (shared chunks, KB values so that chunks split, range removals over several
 * chunks, conditional updates, 300 ms TTLs while the sweeper runs every 100 ms); four more write
 * 2-key batches to a second segment that is deleted and re-created under them.
 *
 * After each restart: every writer's keys hold exactly its acknowledged state, or that plus its one
 * update in flight (all of it or none), with exact versions; iterators are ordered without
 * duplicates in both directions; point reads, iterators and Scan agree; new versions are above every
 * acknowledged one, in the re-created segment too; no 2-key batch is half present.
 *
 * KVT_MODEL_KILLS (default 10) and KVT_MODEL_SEED (default 11) run it longer or with another seed;
 * a soak stops at its time budget and logs the kills it ran.
 */
import { describe, expect, it } from 'vitest';
import type { ScanResponse } from '../../proto/messages';
import { applyOps, describeOps, FamilyModel, keyName, ModelEntry, ModelOp, modelKnob, randomUpdate, toModifications } from '../harness/engine-model';
import { mulberry32, rawCall, rawClient } from '../harness/oracle';
import { KvtProcess, startSegmentStore, tempDir } from '../harness/process';
import { grpcAdapter, SegmentStoreAdapter } from '../suites/segment-store-adapter';

/** The segment of the model writers. */
const SEG = '7';
/** The segment deleted and re-created under its writers. */
const DSEG = '8';
const FAMILIES = ['fa', 'fb', ''];
const WRITERS_PER_FAMILY = 5;
/** Keys per writer: writer i of a family owns keyName(i * SPAN) … keyName((i + 1) * SPAN - 1). */
const SPAN = 40;
const BATCH_WRITERS = 4;
/** Key numbers per batch writer (batch writer w writes d{w}-{k} and e{w}-{k} together). */
const BATCH_KEYS = 50;
const SHORT_TTL_MS = 300;
const KILLS = modelKnob('KVT_MODEL_KILLS', 10);
const SEED = modelKnob('KVT_MODEL_SEED', 11);
/** Where a long soak stops (a kill cycle takes about 3 s). */
const TIME_BUDGET_MS = Math.max(120_000, KILLS * 15_000);
const STORE_ARGS = ['--host', '127.0.0.1', '--expiry-sweep-interval-ms', '100'];

interface Writer {
  family: string;
  base: number;
  /** The acknowledged state of the writer's keys. */
  state: FamilyModel;
  /** The highest version the writer saw acknowledged (or adopted after a restart). */
  maxSequence: number;
  /** The update in flight when the store was killed, and the writer's state if it was applied. */
  pending?: { ops: ModelOp[]; post: FamilyModel };
  stopped: boolean;
}

/** `value head:length[@sequence]`, or 'absent'. */
function show(e: ModelEntry | undefined, withSequence: boolean): string {
  return e ? `${e.value.slice(0, 14)}:${e.value.length}${withSequence ? `@${e.sequence}` : ''}` : 'absent';
}

/** `ops` applied with their conditions ignored (the store decides them: TTLs run on its clock). */
function applyIgnoringConditions(state: FamilyModel, ops: ModelOp[]): FamilyModel {
  const unconditional = ops.map((o): ModelOp => {
    if (o.kind === 'INSERT') return { ...o, kind: 'PUT' };
    if (o.kind === 'REPLACE') return { kind: 'PUT', key: o.key, value: o.value, ttl: 0 };
    if (o.kind === 'REMOVE') return { kind: 'REMOVE', key: o.key };
    return o;
  });
  return applyOps(state, unconditional, Date.now(), SEG, () => 0)!;
}

/**
 * Sends random updates of the writer's keys, one at a time, until `until` or the first failure that
 * is not a failed condition (the kill): that update stays `pending`, its outcome unknown.
 */
async function runWriter(store: SegmentStoreAdapter, w: Writer, rand: () => number, until: number, counters: { acked: number; failed: number; maxSequence: number }): Promise<void> {
  for (let n = 0; n < 5_000 && Date.now() < until && !w.stopped; n++) {
    const ops = randomUpdate(rand, w.state, { familyless: w.family === '', segmentId: SEG, tag: `w${w.base}n${n}t${Date.now() % 100000}`, shortTtlMs: SHORT_TTL_MS, keyBase: w.base, keySpan: SPAN });
    if (ops.length === 0) continue;
    // The state if it succeeds (sequences are 0 until the answer gives them).
    const post = applyOps(w.state, ops, Date.now(), SEG, () => 0) ?? applyIgnoringConditions(w.state, ops);
    w.pending = { ops, post };
    try {
      const res = await store.update({ segmentId: SEG, modifications: toModifications(w.family, ops) });
      const now = Date.now();
      ops.forEach((o, j) => {
        if (o.kind !== 'PUT' && o.kind !== 'INSERT' && o.kind !== 'REPLACE') return;
        const sequence = Number(res.sequences[j]);
        post.set(o.key, { ...post.get(o.key)!, sequence, expiresAt: o.kind !== 'REPLACE' && o.ttl ? now + o.ttl : 0 });
        w.maxSequence = Math.max(w.maxSequence, sequence);
        counters.maxSequence = Math.max(counters.maxSequence, sequence);
      });
      w.state = post;
      w.pending = undefined;
      counters.acked++;
    } catch (err) {
      const code = (err as { code?: string }).code;
      if (code === 'BAD_KEY_VERSION' || code === 'NO_SUCH_KEY') {
        w.pending = undefined;
        counters.failed++;
        continue;
      }
      w.stopped = true; // killed: the outcome of `pending` is unknown
      return;
    }
  }
}

describe('segment store SIGKILLed under mixed workloads, against a model', () => {
  it(
    'keeps exactly the acknowledged state (plus all or nothing of each update in flight) across repeated SIGKILLs',
    async () => {
      using dir = tempDir('kvt-ss-crash-model-');
      const rand = mulberry32(SEED);
      const writers: Writer[] = [];
      for (const family of FAMILIES) for (let i = 0; i < WRITERS_PER_FAMILY; i++) writers.push({ family, base: i * SPAN, state: new Map(), maxSequence: 0, stopped: false });
      const totals = { acked: 0, failed: 0, maxSequence: 0 };
      let kills = 0,
        checks = 0,
        inFlightApplied = 0,
        inFlightAbsent = 0,
        segmentDeletes = 0,
        batchWrites = 0,
        batchPairs = 0;
      let batchMaxSequence = 0;
      let proc: KvtProcess = await startSegmentStore(dir.path, undefined, STORE_ARGS);
      {
        const s = grpcAdapter(proc.address);
        await s.createSegment(SEG);
        await s.createSegment(DSEG);
        s.close();
      }
      const started = Date.now();
      try {
        for (let cycle = 0; cycle < KILLS && Date.now() - started < TIME_BUDGET_MS; cycle++) {
          const store = grpcAdapter(proc.address);
          const runMs = 800 + Math.floor(rand() * 2500);
          const until = Date.now() + runMs + 10_000;
          for (const w of writers) w.stopped = false;
          const counters = { acked: 0, failed: 0, maxSequence: totals.maxSequence };
          const tasks = writers.map((w, i) => runWriter(store, w, mulberry32(SEED * 1000 + cycle * 100 + i), until, counters));
          // The second segment: 2-key batches while it is deleted and re-created.
          let batchStop = false;
          const batchTasks = Array.from({ length: BATCH_WRITERS }, async (_, i) => {
            for (let n = 0; n < 5_000 && !batchStop; n++) {
              const k = n % BATCH_KEYS;
              try {
                const res = await store.update({
                  segmentId: DSEG,
                  modifications: [
                    { type: 'PUT', family: 'df', key: Buffer.from(`d${i}-${k}`), value: Buffer.alloc(2000, 97 + i) },
                    { type: 'PUT', family: 'df', key: Buffer.from(`e${i}-${k}`), value: Buffer.alloc(10, 97 + i) },
                  ],
                });
                batchWrites++;
                batchMaxSequence = Math.max(batchMaxSequence, Number(res.sequences[1]));
              } catch (err) {
                if ((err as { code?: string }).code !== 'SEGMENT_NOT_FOUND') return; // killed
                await new Promise((res) => setTimeout(res, 2));
              }
            }
          });
          const deleter = (async () => {
            for (let n = 0; n < 1_000 && !batchStop; n++) {
              await new Promise((res) => setTimeout(res, 50 + Math.floor(rand() * 150)));
              try {
                if (await store.deleteSegment(DSEG)) segmentDeletes++;
                await new Promise((res) => setTimeout(res, 10));
                await store.createSegment(DSEG);
              } catch {
                return; // killed
              }
            }
          })();
          await new Promise((res) => setTimeout(res, runMs));
          expect(await proc.kill('SIGKILL')).toBeNull();
          kills++;
          batchStop = true;
          await Promise.all([...tasks, ...batchTasks, deleter]);
          store.close();
          totals.acked += counters.acked;
          totals.failed += counters.failed;
          totals.maxSequence = Math.max(totals.maxSequence, counters.maxSequence);

          proc = await startSegmentStore(dir.path, undefined, STORE_ARGS);
          await new Promise((res) => setTimeout(res, 400)); // the short TTLs of the last acknowledged writes pass
          const after = grpcAdapter(proc.address);
          const raw = rawClient('SegmentStore', proc.address);
          try {
            const now = Date.now();
            // Entries with a short TTL count as gone (they are by now); those with an hour as live.
            const live = (e: ModelEntry | undefined): ModelEntry | undefined => (e && (e.expiresAt === 0 || e.expiresAt > now + 60_000) ? e : undefined);
            // What the store holds, per family (from the forward iterator).
            const actualByFamily = new Map<string, Map<string, ModelEntry>>();
            for (const fam of FAMILIES) {
              for (const reverse of [false, true]) {
                const got: [string, ModelEntry][] = [];
                let afterKey: Buffer | undefined;
                for (let page = 0; page < 10_000; page++) {
                  const res = await after.iterate({
                    segmentId: SEG,
                    family: fam,
                    includeValues: true,
                    maxItems: 1 + Math.floor(rand() * 30),
                    reverse,
                    hasAfter: afterKey !== undefined,
                    after: afterKey,
                  });
                  for (const item of res.items)
                    got.push([Buffer.from(item.key).toString('latin1'), { value: Buffer.from(item.value).toString('latin1'), sequence: Number(item.sequence), expiresAt: 0 }]);
                  if (res.done || res.items.length === 0) break;
                  afterKey = Buffer.from(res.items[res.items.length - 1].key);
                }
                const keys = got.map(([k]) => k);
                const sorted = [...keys].sort();
                if (reverse) sorted.reverse();
                expect(keys, `cycle ${cycle} fam '${fam}' reverse=${reverse}: iterator order / duplicates`).toEqual([...new Set(sorted)]);
                if (!reverse) actualByFamily.set(fam, new Map(got));
                else expect(new Map(got), `cycle ${cycle} fam '${fam}': reverse differs from forward`).toEqual(actualByFamily.get(fam));
              }
              // Point reads of every writer key agree with the iterator.
              const allKeys = Array.from({ length: WRITERS_PER_FAMILY * SPAN }, (_, i) => keyName(i));
              const got = await after.get({ segmentId: SEG, keys: allKeys.map((k) => ({ family: fam, key: Buffer.from(k, 'latin1') })) });
              const iterated = actualByFamily.get(fam)!;
              got.entries.forEach((e, i) => {
                const s = e.found ? `${Buffer.from(e.value).toString('latin1').slice(0, 14)}:${e.value.length}@${e.sequence}` : 'absent';
                expect(s, `cycle ${cycle} fam '${fam}' ${allKeys[i]}: get vs iterator`).toBe(show(iterated.get(allKeys[i]), true));
              });
              checks += allKeys.length;
            }
            // Scan agrees with the iterators (families in storage order: fa, fb, then the probes' zz, then family-less).
            const scanned: string[] = [];
            let position: Uint8Array = Buffer.alloc(0);
            for (let page = 0; page < 10_000; page++) {
              const res = await rawCall<ScanResponse>(raw, 'Scan', { segmentId: SEG, includeValues: true, maxItems: 1 + Math.floor(rand() * 40), after: position }, 30_000);
              for (const item of res.items) scanned.push(`${item.family}/${Buffer.from(item.key).toString('latin1')}@${item.sequence}:${item.value.length}`);
              position = res.position;
              if (res.done) break;
            }
            const fromIterators: string[] = [];
            for (const fam of FAMILIES) for (const [k, e] of actualByFamily.get(fam)!) fromIterators.push(`${fam}/${k}@${e.sequence}:${e.value.length}`);
            expect(
              scanned.filter((x) => !x.startsWith('zz/')),
              `cycle ${cycle}: scan vs iterators`,
            ).toEqual(fromIterators);
            checks++;
            // The model, writer by writer.
            for (const w of writers) {
              const actual = actualByFamily.get(w.family)!;
              const inWindow = (k: string) => k >= keyName(w.base) && k < keyName(w.base + SPAN);
              const mine = (m: Map<string, ModelEntry>): Map<string, string> => {
                const out = new Map<string, string>();
                for (const [k, e] of [...m].sort((a, b) => (a[0] < b[0] ? -1 : 1))) if (inWindow(k) && live(e)) out.set(k, show(e, false));
                return out;
              };
              const act = mine(actual);
              const acked = mine(w.state);
              const matchesAcked = JSON.stringify([...act]) === JSON.stringify([...acked]);
              // The state with the update in flight applied (its short TTLs have passed too).
              const post = w.pending ? mine(w.pending.post) : undefined;
              const matchesPost = post !== undefined && JSON.stringify([...act]) === JSON.stringify([...post]);
              if (!matchesAcked && !matchesPost) {
                const diff: string[] = [];
                for (const k of [...new Set([...act.keys(), ...acked.keys(), ...(post?.keys() ?? [])])].sort()) {
                  if (act.get(k) !== acked.get(k) || act.get(k) !== post?.get(k))
                    diff.push(`${k}: acked ${acked.get(k) ?? 'absent'} / store ${act.get(k) ?? 'absent'} / in-flight post ${post?.get(k) ?? '-'}`);
                }
                const inFlight = w.pending ? describeOps(w.pending.ops) : 'none in flight';
                throw new Error(
                  `cycle ${cycle} writer fam '${w.family}' base ${w.base}: state is neither the acknowledged one nor that plus the update in flight (${inFlight}):\n${diff.slice(0, 20).join('\n')}`,
                );
              }
              if (matchesAcked && !matchesPost) {
                // Exact versions too.
                for (const [k, e] of w.state) if (live(e) && inWindow(k)) expect(actual.get(k)?.sequence, `cycle ${cycle} ${w.family}/${k} version`).toBe(e.sequence);
                if (w.pending) inFlightAbsent++;
              } else {
                inFlightApplied++;
                // Adopt the update in flight with the versions the store shows: those it wrote above every
                // version the writer saw acknowledged, the others unchanged.
                const adopted: FamilyModel = new Map();
                for (const [k, e] of w.pending!.post) {
                  const a = actual.get(k);
                  if (!a) {
                    adopted.set(k, e);
                    continue;
                  }
                  if (e.sequence === 0) expect(a.sequence, `cycle ${cycle} ${w.family}/${k}: in-flight version not above the acknowledged ones`).toBeGreaterThan(w.maxSequence);
                  else expect(a.sequence, `cycle ${cycle} ${w.family}/${k} version`).toBe(e.sequence);
                  adopted.set(k, { ...e, sequence: a.sequence });
                }
                for (const e of adopted.values()) w.maxSequence = Math.max(w.maxSequence, e.sequence);
                w.state = adopted;
              }
              checks += SPAN;
              w.pending = undefined;
            }
            // New writes get versions above every acknowledged one.
            const probe = await after.update({ segmentId: SEG, modifications: [{ type: 'PUT', family: 'zz', key: Buffer.from('probe'), value: Buffer.from('p') }] });
            expect(Number(probe.sequences[0]), `cycle ${cycle}: version after restart`).toBeGreaterThan(totals.maxSequence);
            totals.maxSequence = Number(probe.sequences[0]);
            // The deleted and re-created segment (the kill may have come between delete and create).
            if (!(await after.listSegments()).some((s) => s.segmentId === DSEG)) await after.createSegment(DSEG);
            const batchProbe = await after.update({ segmentId: DSEG, modifications: [{ type: 'PUT', family: 'df', key: Buffer.from('probe'), value: Buffer.from('p') }] });
            expect(Number(batchProbe.sequences[0]), `cycle ${cycle}: re-created segment version`).toBeGreaterThan(batchMaxSequence);
            batchMaxSequence = Number(batchProbe.sequences[0]);
            const batchKeys: string[] = [];
            let afterKey: Buffer | undefined;
            for (let page = 0; page < 1_000; page++) {
              const res = await after.iterate({ segmentId: DSEG, family: 'df', includeValues: false, maxItems: 17, hasAfter: afterKey !== undefined, after: afterKey });
              for (const item of res.items) batchKeys.push(Buffer.from(item.key).toString('latin1'));
              if (res.done || res.items.length === 0) break;
              afterKey = Buffer.from(res.items[res.items.length - 1].key);
            }
            expect(batchKeys, `cycle ${cycle}: re-created segment iterator order / duplicates`).toEqual([...new Set([...batchKeys].sort())]);
            // Each 2-key batch is atomic: d{w}-{k} is present iff e{w}-{k} is.
            const pairs = Array.from({ length: BATCH_WRITERS * BATCH_KEYS }, (_, j) => [`d${Math.floor(j / BATCH_KEYS)}-${j % BATCH_KEYS}`, `e${Math.floor(j / BATCH_KEYS)}-${j % BATCH_KEYS}`]);
            const pairGet = await after.get({ segmentId: DSEG, keys: pairs.flat().map((k) => ({ family: 'df', key: Buffer.from(k) })) });
            pairs.forEach(([d], j) => expect(pairGet.entries[2 * j].found, `cycle ${cycle}: ${DSEG} batch of ${d} partially present`).toBe(pairGet.entries[2 * j + 1].found));
            batchPairs += pairs.length;
            checks++;
          } finally {
            after.close();
            raw.close();
          }
        }
      } finally {
        await proc.stop();
      }
      console.log(JSON.stringify({ seed: SEED, kills, acked: totals.acked, conditionFailed: totals.failed, checks, inFlightApplied, inFlightAbsent, segmentDeletes, batchWrites, batchPairs }));
      expect(totals.acked).toBeGreaterThan(100);
    },
    TIME_BUDGET_MS + 60_000,
  );
});
