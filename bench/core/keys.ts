/**
 * Deterministic key choice for the workloads: a seeded PRNG and a zipfian generator (YCSB's
 * algorithm after Gray et al., "Quickly generating billion-record synthetic databases"), so every
 * peer sees the same access pattern.
 */

/** A small, fast seeded PRNG (mulberry32); returns floats in [0, 1). */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Chooses an index in [0, n). */
export type KeyChooser = (rand: () => number) => number;

/** Uniform over [0, n). */
export function uniformChooser(n: number): KeyChooser {
  return (rand) => Math.floor(rand() * n);
}

function zeta(n: number, theta: number): number {
  let sum = 0;
  for (let i = 1; i <= n; i++) sum += 1 / Math.pow(i, theta);
  return sum;
}

/**
 * Zipfian over [0, n) with skew `theta` (0.99 as in YCSB). Item 0 is the hottest; the hot items
 * are then scattered over the key space by a fixed multiplicative hash, as YCSB's scrambled
 * zipfian does, so they do not all sit next to each other (and in one kvt partition).
 */
export function zipfianChooser(n: number, theta = 0.99): KeyChooser {
  const zetan = zeta(n, theta);
  const zeta2 = zeta(2, theta);
  const alpha = 1 / (1 - theta);
  const eta = (1 - Math.pow(2 / n, 1 - theta)) / (1 - zeta2 / zetan);
  return (rand) => {
    const u = rand();
    const uz = u * zetan;
    let rank: number;
    if (uz < 1) rank = 0;
    else if (uz < 1 + Math.pow(0.5, theta)) rank = 1;
    else rank = Math.min(n - 1, Math.floor(n * Math.pow(eta * u - eta + 1, alpha)));
    return scatter(rank, n);
  };
}

/** A bijection-ish spread of ranks over [0, n) (collisions are harmless: still skewed). */
function scatter(rank: number, n: number): number {
  // rank < 2^24 keeps the product below 2^53, so plain doubles are exact here.
  return (rank * 2654435761) % n;
}

/** The name of key `i` of a key space: fixed width so lexical order equals numeric order. */
export function keyName(space: string, i: number): string {
  return `${space}-${String(i).padStart(8, '0')}`;
}

/** Distinct values of a ValueSource. */
export const VALUE_POOL_SIZE = 1024;
/** Bytes between the starts of two values in a ValueSource's buffer (values up to this size never overlap). */
const VALUE_STRIDE = 256;

/**
 * Values for writes: {@link VALUE_POOL_SIZE} windows of `size` bytes of one buffer of random letters,
 * made once (a measured loop allocates nothing for them). Why this shape:
 * - 100 values drawn for a batch repeat about 5 times between them, so a chunk record or a LevelDB
 *   block of them barely compresses. kvt's and raw LevelDB's storage compresses blocks (snappy) and
 *   etcd's does not; the former pool of 64 values repeated inside every block and made kvt's W4
 *   faster in alternating runs (9–10% at da687c8, 6% in 8 rounds on 2026-11-23): a gain of the
 *   synthetic data, not of kvt;
 * - the values lie in one ~256 KiB buffer and their views were made one after another, so they stay
 *   in a core's cache like a real client's freshly made values. A view cut per pick (tried) cost
 *   the driver ~7% of its busy time, and a per-entry cost in the driver weighs most on the fastest peer.
 */
export class ValueSource {
  private readonly pool: Buffer[];

  constructor(
    readonly size: number,
    seed = 1,
  ) {
    if (size > VALUE_STRIDE) {
      // Larger values: separate buffers (no bench case uses them; correctness over cache).
      this.pool = Array.from({ length: VALUE_POOL_SIZE }, (_, i) => makeValue(size, seed + i));
      return;
    }
    const source = makeValue(VALUE_POOL_SIZE * VALUE_STRIDE, seed);
    this.pool = Array.from({ length: VALUE_POOL_SIZE }, (_, i) => source.subarray(i * VALUE_STRIDE, i * VALUE_STRIDE + size));
  }

  /** A value chosen by `rand`. */
  pick(rand: () => number): Buffer {
    return this.pool[Math.floor(rand() * VALUE_POOL_SIZE)];
  }

  /** Value `i` of a loaded dataset: consecutive indexes get distinct values. */
  at(i: number): Buffer {
    return this.pool[i % VALUE_POOL_SIZE];
  }
}

/** A value of `size` bytes whose content varies with `seed` (so nothing compresses to nothing). */
export function makeValue(size: number, seed: number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  const rand = seededRandom(seed);
  for (let i = 0; i < size; i++) buf[i] = 97 + Math.floor(rand() * 26);
  return buf;
}
