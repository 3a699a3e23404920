/**
 * The linearizability checker and the versioned key-value model, on small hand-written histories
 * (linearizable ones and violations, operations of unknown outcome among them), and on long
 * histories of a simulated correct store with one answer falsified.
 */
import { describe, expect, it } from 'vitest';
import { checkKvHistory, KvOp, Mod, Observed, UpdateOp } from '../../harness/kv-model';
import { checkLinearizable, minimizeHistory } from '../../harness/linearizability';
import { mulberry32 } from '../../harness/oracle';

/** A history under construction: times are [invoked, completed] (completed undefined: unknown outcome). */
class History {
  readonly ops: KvOp[] = [];

  private common(client: number, [invokedAt, completedAt]: [number, number?]) {
    return { id: this.ops.length, client, group: 'f', invokedAt, completedAt };
  }

  /** An update; `versions` for an acknowledged one, a code for a failed one, 'unknown' for neither. */
  update(client: number, at: [number, number?], mods: Mod[], result: (string | null)[] | ['BAD_KEY_VERSION' | 'NO_SUCH_KEY', number] | 'unknown'): this {
    let outcome: UpdateOp['outcome'];
    if (result === 'unknown') outcome = { type: 'unknown' };
    else if (result[0] === 'BAD_KEY_VERSION' || result[0] === 'NO_SUCH_KEY') outcome = { type: 'failed', code: result[0], index: result[1] as number };
    else outcome = { type: 'ok', versions: result as (string | null)[] };
    this.ops.push({ ...this.common(client, result === 'unknown' ? [at[0]] : at), f: 'update', name: 'update', mods, outcome });
    return this;
  }

  put(client: number, at: [number, number?], key: string, value: string, result: string | 'unknown' | ['BAD_KEY_VERSION' | 'NO_SUCH_KEY', number], version?: string): this {
    return this.update(client, at, [{ type: 'put', key, value, version }], typeof result === 'string' && result !== 'unknown' ? [result] : result);
  }

  /** Reads: `values` as `value@version` or null for absent. */
  read(client: number, at: [number, number], keys: string[], values: (string | null)[]): this {
    this.ops.push({ ...this.common(client, at), f: 'read', name: 'getAll', keys, values: values.map((v, i) => observed(keys[i], v)) });
    return this;
  }

  scan(client: number, at: [number, number], prefix: string, items: string[]): this {
    this.ops.push({ ...this.common(client, at), f: 'scan', name: 'entryIterator', range: { prefix }, items: items.map((s) => observed(s.split('=')[0], s.split('=')[1])!) });
    return this;
  }

  verdict(): string {
    const check = checkKvHistory(this.ops);
    if (check.conflicts.length > 0) return 'conflict';
    return check.groups[0].verdict;
  }
}

function observed(key: string, text: string | null): Observed | null {
  if (text === null) return null;
  const [value, version] = text.split('@');
  return { key, value, version };
}

describe('checkKvHistory on single keys', () => {
  it('accepts a sequential history and a read concurrent with a write seeing either value', () => {
    expect(new History().put(1, [0, 1], 'a', 'x', '7.1').read(2, [2, 3], ['a'], ['x@7.1']).verdict()).toBe('linearizable');
    expect(new History().put(1, [0, 10], 'a', 'x', '7.1').read(2, [1, 2], ['a'], [null]).verdict()).toBe('linearizable');
    expect(new History().put(1, [0, 10], 'a', 'x', '7.1').read(2, [1, 2], ['a'], ['x@7.1']).verdict()).toBe('linearizable');
  });

  it('rejects a read that misses a write completed before it, or sees an older one', () => {
    expect(new History().put(1, [0, 1], 'a', 'x', '7.1').read(2, [2, 3], ['a'], [null]).verdict()).toBe('violation');
    const h = new History().put(1, [0, 1], 'a', 'x', '7.1').put(1, [2, 3], 'a', 'y', '7.2').read(2, [4, 5], ['a'], ['x@7.1']);
    expect(h.verdict()).toBe('violation');
  });

  it('rejects two reads that see a concurrent write and then not (no going back)', () => {
    const h = new History().put(1, [0, 10], 'a', 'x', '7.1').read(2, [1, 2], ['a'], ['x@7.1']).read(2, [3, 4], ['a'], [null]);
    expect(h.verdict()).toBe('violation');
  });

  it('lets a write of unknown outcome take effect at any time after its invocation, or never', () => {
    const base = () => new History().put(1, [0], 'a', 'x', 'unknown');
    expect(base().read(2, [5, 6], ['a'], [null]).verdict()).toBe('linearizable');
    expect(base().read(2, [5, 6], ['a'], [null]).read(2, [100, 101], ['a'], ['x@7.1']).verdict()).toBe('linearizable');
    expect(base().read(2, [5, 6], ['a'], ['x@7.1']).read(2, [7, 8], ['a'], [null]).verdict()).toBe('violation');
    // Not before its invocation.
    expect(new History().read(2, [0, 1], ['a'], ['x@7.1']).put(1, [2], 'a', 'x', 'unknown').verdict()).toBe('violation');
  });

  it('rejects a failed condition that saw a write which then never took effect', () => {
    // a=x at 7.1; a put of y with unknown outcome; a replace expecting 7.1 fails with BAD_KEY_VERSION
    // (so y was there), yet a later read finds x again.
    const h = () => new History().put(1, [0, 1], 'a', 'x', '7.1').put(2, [2], 'a', 'y', 'unknown').put(3, [3, 4], 'a', 'z', ['BAD_KEY_VERSION', 0], '7.1');
    expect(h().verdict()).toBe('linearizable');
    expect(h().read(4, [5, 6], ['a'], ['y@7.2']).verdict()).toBe('linearizable');
    expect(h().read(4, [5, 6], ['a'], ['x@7.1']).verdict()).toBe('violation');
  });

  it('decides conditions by version: success only at the current version, NO_SUCH_KEY only when absent', () => {
    const h = () => new History().put(1, [0, 1], 'a', 'x', '7.1');
    expect(h().put(2, [2, 3], 'a', 'y', '7.2', '7.1').verdict()).toBe('linearizable');
    expect(h().put(2, [2, 3], 'a', 'y', ['BAD_KEY_VERSION', 0], '7.1').verdict()).toBe('violation');
    expect(h().put(1, [2, 3], 'a', 'y', '7.2').put(2, [4, 5], 'a', 'z', '7.3', '7.1').verdict()).toBe('violation');
    expect(h().put(2, [2, 3], 'a', 'y', ['NO_SUCH_KEY', 0], '7.1').verdict()).toBe('violation');
    expect(
      h()
        .update(2, [2, 3], [{ type: 'remove', key: 'a' }], [null])
        .put(3, [4, 5], 'a', 'y', ['NO_SUCH_KEY', 0], '7.1')
        .verdict(),
    ).toBe('linearizable');
    expect(
      h()
        .update(2, [2, 3], [{ type: 'insert', key: 'a', value: 'y' }], ['7.2'])
        .verdict(),
    ).toBe('violation');
    expect(
      h()
        .update(2, [2, 3], [{ type: 'insert', key: 'a', value: 'y' }], ['BAD_KEY_VERSION', 0])
        .verdict(),
    ).toBe('linearizable');
  });

  it('orders writes by their versions: of two concurrent writes, the higher version wins', () => {
    const h = () => new History().put(1, [0, 10], 'a', 'x', '7.5').put(2, [0, 10], 'a', 'y', '7.4');
    expect(h().read(3, [11, 12], ['a'], ['x@7.5']).verdict()).toBe('linearizable');
    expect(h().read(3, [11, 12], ['a'], ['y@7.4']).verdict()).toBe('violation');
  });

  it('reports a write seen with two versions, or two writes with one version, as a conflict', () => {
    expect(new History().put(1, [0, 1], 'a', 'x', '7.1').read(2, [2, 3], ['a'], ['x@7.2']).verdict()).toBe('conflict');
    expect(new History().put(1, [0, 1], 'a', 'x', '7.1').put(1, [2, 3], 'a', 'y', '7.1').verdict()).toBe('conflict');
  });
});

describe('checkKvHistory with expiring writes (ttlMs; the checker allows the clocks 10 ms)', () => {
  const ttl = (key: string, value: string, type: 'put' | 'insert' = 'put'): Mod[] => [{ type, key, value, ttlMs: 100 }];
  /** a=x written with a TTL of 100 ms between 0 and 20: it expires between 90 and 130 (the slack included). */
  const h = () => new History().update(1, [0, 20], ttl('a', 'x'), ['7.1']);

  it('sees the entry until the earliest expiry, and not after the latest', () => {
    expect(h().read(2, [30, 80], ['a'], ['x@7.1']).read(2, [140, 141], ['a'], [null]).verdict()).toBe('linearizable');
    expect(h().read(2, [30, 80], ['a'], [null]).verdict()).toBe('violation');
    expect(h().read(2, [140, 141], ['a'], ['x@7.1']).verdict()).toBe('violation');
    // Within the window either, but never back once gone.
    expect(h().read(2, [100, 101], ['a'], [null]).verdict()).toBe('linearizable');
    expect(h().read(2, [100, 101], ['a'], ['x@7.1']).verdict()).toBe('linearizable');
    expect(h().read(2, [100, 101], ['a'], [null]).read(2, [102, 103], ['a'], ['x@7.1']).verdict()).toBe('violation');
  });

  it('makes an expired key absent for conditions, and leaves a later write alone', () => {
    expect(
      h()
        .update(2, [140, 150], ttl('a', 'y', 'insert'), ['7.2'])
        .verdict(),
    ).toBe('linearizable');
    expect(h().put(2, [140, 150], 'a', 'y', ['NO_SUCH_KEY', 0], '7.1').verdict()).toBe('linearizable');
    expect(h().put(2, [140, 150], 'a', 'y', '7.2', '7.1').verdict()).toBe('violation');
    // Overwritten before its expiry: the expiry of x does not remove y.
    expect(h().put(2, [30, 40], 'a', 'y', '7.2').read(3, [200, 201], ['a'], ['y@7.2']).verdict()).toBe('linearizable');
    expect(h().put(2, [30, 40], 'a', 'y', '7.2').read(3, [200, 201], ['a'], [null]).verdict()).toBe('violation');
  });

  it('lets the expiry of a write of unknown outcome come at any time after its earliest, or never', () => {
    const unknown = () => new History().update(1, [0], ttl('a', 'x'), 'unknown');
    expect(unknown().read(2, [50, 51], ['a'], ['x@7.1']).read(2, [10_000, 10_001], ['a'], ['x@7.1']).verdict()).toBe('linearizable');
    expect(unknown().read(2, [50, 51], ['a'], ['x@7.1']).read(2, [10_000, 10_001], ['a'], [null]).verdict()).toBe('linearizable');
    expect(unknown().read(2, [50, 51], ['a'], ['x@7.1']).read(2, [60, 61], ['a'], [null]).verdict()).toBe('violation');
  });

  it('lets a write of unknown outcome that nobody read overwrite a key and expire, leaving it absent', () => {
    // Nobody saw y, yet its expiry is what a read of "absent" needs: it cannot be deferred away.
    const h = () => new History().put(1, [0, 1], 'a', 'x', '7.1').update(2, [10], ttl('a', 'y'), 'unknown');
    expect(h().read(3, [500, 501], ['a'], [null]).verdict()).toBe('linearizable');
    expect(h().read(3, [500, 501], ['a'], [null]).read(3, [502, 503], ['a'], ['x@7.1']).verdict()).toBe('violation');
  });

  it('lets a conditional write of unknown outcome that nobody read keep the key its condition saw from expiring', () => {
    // y replaces x (TTL) at x's version before x expires, and has no TTL: a condition long after x's
    // expiry finds the key (BAD_KEY_VERSION, not NO_SUCH_KEY). The write cannot be put off until that
    // condition: by then x is gone and the write's own condition fails. (Seen in a crash test: a store
    // killed after writing y, before answering.)
    const stale = () => h().put(2, [30], 'a', 'y', 'unknown', '7.1');
    expect(stale().put(3, [500, 501], 'a', 'z', ['BAD_KEY_VERSION', 0], '7.9').verdict()).toBe('linearizable');
    expect(stale().put(3, [500, 501], 'a', 'z', ['NO_SUCH_KEY', 0], '7.9').verdict()).toBe('linearizable');
    // Either it took effect or not: not the key present and then absent again.
    expect(stale().put(3, [500, 501], 'a', 'z', ['BAD_KEY_VERSION', 0], '7.9').read(4, [502, 503], ['a'], [null]).verdict()).toBe('violation');
  });
});

describe('checkKvHistory on a key family', () => {
  const batch: Mod[] = [
    { type: 'put', key: 'a1', value: 'p' },
    { type: 'put', key: 'b1', value: 'q' },
  ];

  it('rejects a read that sees half of an atomic batch', () => {
    const h = () => new History().update(1, [0, 10], batch, ['7.1', '7.2']);
    expect(h().read(2, [1, 2], ['a1', 'b1'], ['p@7.1', 'q@7.2']).verdict()).toBe('linearizable');
    expect(h().read(2, [1, 2], ['a1', 'b1'], [null, null]).verdict()).toBe('linearizable');
    expect(h().read(2, [1, 2], ['a1', 'b1'], ['p@7.1', null]).verdict()).toBe('violation');
    expect(h().read(2, [1, 2], ['a1'], ['p@7.1']).read(2, [3, 4], ['b1'], [null]).verdict()).toBe('violation');
  });

  it('applies nothing of a batch whose condition failed, and checks the failing index', () => {
    const h = () => new History().put(1, [0, 1], 'a1', 'x', '7.1');
    const conditional: Mod[] = [
      { type: 'put', key: 'b1', value: 'q' },
      { type: 'put', key: 'a1', value: 'y', version: 'NOT_EXISTS' },
    ];
    expect(h().update(2, [2, 3], conditional, ['BAD_KEY_VERSION', 1]).read(3, [4, 5], ['b1'], [null]).verdict()).toBe('linearizable');
    expect(h().update(2, [2, 3], conditional, ['BAD_KEY_VERSION', 0]).verdict()).toBe('violation');
    expect(h().update(2, [2, 3], conditional, ['BAD_KEY_VERSION', 1]).read(3, [4, 5], ['b1'], ['q@7.2']).verdict()).toBe('violation');
  });

  it('checks an iterator page against every key of its range, and range removals', () => {
    const h = () => new History().update(1, [0, 1], [...batch, { type: 'put', key: 'a2', value: 'r' }], ['7.1', '7.2', '7.3']);
    expect(h().scan(2, [2, 3], 'a', ['a1=p@7.1', 'a2=r@7.3']).verdict()).toBe('linearizable');
    expect(h().scan(2, [2, 3], 'a', ['a1=p@7.1']).verdict()).toBe('violation');
    const removed = () => h().update(1, [2, 3], [{ type: 'removeRange', range: { prefix: 'a' } }], [null]);
    expect(removed().scan(2, [4, 5], '', ['b1=q@7.2']).verdict()).toBe('linearizable');
    expect(removed().read(2, [4, 5], ['a2'], ['r@7.3']).verdict()).toBe('violation');
  });
});

/**
 * A correct store simulated: operations take effect one by one at increasing instants, each seen by
 * its client in an interval around that instant; some never answer (unknown outcome), and of those
 * some took effect and some did not.
 */
function simulate(seed: number, count: number): KvOp[] {
  const rand = mulberry32(seed);
  const keys = ['a1', 'a2', 'b1'];
  const state = new Map<string, { value: string; version: string }>();
  let sequence = 0;
  /** Versions answered so far: a client's stale condition is one of them, as in the real workload. */
  const seen: string[] = [];
  const ops: KvOp[] = [];
  for (let i = 0; i < count; i++) {
    const at = i * 10;
    const common = { id: i, client: i % 5, group: 'f', invokedAt: at - rand() * 25, completedAt: (at + rand() * 25) as number | undefined, name: 'op' };
    const key = keys[Math.floor(rand() * keys.length)];
    const r = rand();
    if (r < 0.4) {
      const e = state.get(key);
      if (e) seen.push(e.version);
      ops.push({ ...common, f: 'read', keys: [key], values: [e ? { key, ...e } : null] });
      continue;
    }
    const value = `v${i}`;
    const current = state.get(key);
    const conditional = r < 0.7;
    const expected = conditional ? (rand() < 0.6 && current && seen.includes(current.version) ? current.version : seen[Math.floor(rand() * seen.length)]) : undefined;
    const mod: Mod = { type: 'put', key, value, version: expected };
    const holds = !conditional || current?.version === expected;
    const unknown = rand() < 0.1;
    if (holds && (!unknown || rand() < 0.5)) state.set(key, { value, version: `9.${++sequence}` });
    if (unknown) ops.push({ ...common, completedAt: undefined, f: 'update', mods: [mod], outcome: { type: 'unknown' } });
    else if (holds) {
      seen.push(state.get(key)!.version);
      ops.push({ ...common, f: 'update', mods: [mod], outcome: { type: 'ok', versions: [state.get(key)!.version] } });
    } else ops.push({ ...common, f: 'update', mods: [mod], outcome: { type: 'failed', code: current ? 'BAD_KEY_VERSION' : 'NO_SUCH_KEY', index: 0 } });
  }
  return ops;
}

describe('checkKvHistory on long simulated histories', () => {
  it('accepts 2,000 operations of a correct store and rejects them once a read sees a write that came after it', () => {
    for (const seed of [1, 2, 3]) {
      const ops = simulate(seed, 2_000);
      const check = checkKvHistory(ops);
      expect(check.conflicts, `seed ${seed}`).toEqual([]);
      expect(check.groups[0].verdict, `seed ${seed}`).toBe('linearizable');

      // A read answered with the value of a write invoked after the read completed.
      const reads = ops.filter((o): o is Extract<KvOp, { f: 'read' }> => o.f === 'read');
      const read = reads[Math.floor(reads.length / 2)];
      const later = ops.find((o): o is UpdateOp => o.f === 'update' && o.outcome.type === 'ok' && o.invokedAt > read.completedAt! && (o.mods[0] as { key: string }).key === read.keys[0])!;
      const falsified = ops.map((o) =>
        o === read ? { ...read, values: [{ key: read.keys[0], value: (later.mods[0] as { value: string }).value, version: (later.outcome as { versions: string[] }).versions[0] }] } : o,
      );
      const bad = checkKvHistory(falsified);
      expect(bad.conflicts).toEqual([]);
      expect(bad.groups[0].verdict, `seed ${seed}`).toBe('violation');
      expect(bad.groups[0].report, `seed ${seed}`).toContain(`#${read.id} `);
    }
  });

  it('gives up with verdict unknown when the search needs more states than allowed', () => {
    const ops = simulate(4, 200);
    const result = checkLinearizable(ops, { initial: 0, step: (s) => s + 1, key: (s) => String(s) }, { maxStates: 10 });
    expect(result.verdict).toBe('unknown');
  });
});

describe('minimizeHistory', () => {
  it('keeps the failed condition and the read that contradict each other, and drops the unrelated reads', () => {
    const h = new History().put(1, [0, 1], 'a', 'x', '7.1');
    for (let i = 0; i < 20; i++) h.read(5, [2 + i * 0.01, 2.005 + i * 0.01], ['b'], [null]);
    h.put(2, [2], 'a', 'y', 'unknown').put(3, [3, 4], 'a', 'z', ['BAD_KEY_VERSION', 0], '7.1').read(4, [5, 6], ['a'], ['x@7.1']).read(4, [7, 8], ['b'], [null]);
    const report = checkKvHistory(h.ops).groups[0].report!;
    const lines = report.split('\n').filter((l) => l.startsWith('    #'));
    expect(lines.map((l) => l.trim().split(' ')[4].split('(')[0])).toEqual(['update', 'update', 'update', 'getAll']);
    expect(report).toContain('BAD_KEY_VERSION at 0');
    expect(report).toContain('(a) → a=x@7.1');
  });

  it('returns the history itself when nothing can be weakened', () => {
    const ops = [{ invokedAt: 0, completedAt: 1 }];
    expect(minimizeHistory(ops, () => true, { unfinished: (o) => o, weaken: () => undefined })).toEqual(ops);
  });
});
