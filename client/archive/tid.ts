/**
 * Render ids (tids) are version 1 UUIDs, whose 60-bit timestamp is split low-first across the
 * string. The archive keys them by 16 bytes in time order (time_hi, time_mid, time_low, clock
 * sequence, node), so that byte order is time order, as Cassandra orders a timeuuid.
 */
const PATTERN = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-1[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}$/;

/** True for a version 1 (time-based) UUID of the RFC 4122 variant. */
export function isTimeUuid(tid: unknown): tid is string {
  return typeof tid === 'string' && PATTERN.test(tid);
}

/** The 16 bytes of a time-ordered key of `tid` (which must pass {@link isTimeUuid}). */
export function tidToKey(tid: string): Buffer {
  const hex = tid.replace(/-/g, '');
  // time_low = hex[0,8), time_mid = hex[8,12), time_hi_and_version = hex[12,16), rest = clock seq + node.
  return Buffer.from(hex.slice(12, 16) + hex.slice(8, 12) + hex.slice(0, 8) + hex.slice(16), 'hex');
}

/** The lower-case UUID string of a key made by {@link tidToKey}. */
export function keyToTid(key: Uint8Array, offset = 0): string {
  const hex = Buffer.from(key.buffer, key.byteOffset + offset, 16).toString('hex');
  const timeHi = hex.slice(0, 4);
  const timeMid = hex.slice(4, 8);
  const timeLow = hex.slice(8, 16);
  return `${timeLow}-${timeMid}-${timeHi}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
