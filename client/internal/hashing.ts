/**
 * The routing hash (DESIGN §2): MurmurHash3 x86 32-bit, seed 0, over the key family's UTF-8 bytes
 * when there is a family, else over the serialized key; mapped to [0, 1) as h / 2^32. This mapping is
 * part of the data layout: changing it would send existing keys to the wrong partition, so unit tests
 * pin it with golden vectors.
 */
import { x86 } from 'murmurhash3js-revisited';

const TWO_POW_32 = 4294967296;

/** MurmurHash3 x86 32-bit of `bytes` with seed 0, as an unsigned integer. */
export function murmur3(bytes: Uint8Array): number {
  return x86.hash32(bytes, 0) >>> 0;
}

/** The routing point in [0, 1) of a key family (UTF-8) or, without a family, of the serialized key. */
export function routingPoint(family: string | null, key: Uint8Array): number {
  const bytes = family === null ? key : Buffer.from(family, 'utf8');
  return murmur3(bytes) / TWO_POW_32;
}

/** The partition index of routing point `x` in a table of `n` equal partitions: min(n-1, floor(x*n)). */
export function partitionIndex(x: number, n: number): number {
  return Math.min(n - 1, Math.floor(x * n));
}
