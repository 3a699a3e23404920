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

/** A value of `size` bytes whose content varies with `seed` (so nothing compresses to nothing). */
export function makeValue(size: number, seed: number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  const rand = seededRandom(seed);
  for (let i = 0; i < size; i++) buf[i] = 97 + Math.floor(rand() * 26);
  return buf;
}
