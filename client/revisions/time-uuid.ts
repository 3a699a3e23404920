/**
 * Time-based (version 1) UUIDs, RFC 4122 §4.2, as render ids (`tid`). A v1 UUID carries a 60-bit
 * timestamp in 100-ns intervals since 1582-10-15, a 14-bit clock sequence and a 48-bit node. We make
 * them from the store's clock with a random clock sequence and a random node (multicast bit set, as
 * §4.5 asks of a node that is not a MAC address), and a counter below the millisecond, so that the ids
 * one generator makes strictly increase even within one millisecond. Small and dependency-free on
 * purpose: the layer needs only make, check, order and read the time of these ids.
 */
import { randomBytes } from 'node:crypto';
import { isTimeUuid } from '../archive/tid';
import { InvalidArgumentError } from '../errors';

/** 100-ns intervals between the Gregorian epoch (1582-10-15) and the Unix epoch, in milliseconds. */
const GREGORIAN_OFFSET_MS = 12_219_292_800_000n;
const TICKS_PER_MS = 10_000n;
const MAX_TIMESTAMP = (1n << 60n) - 1n;

/** An example shown in errors. */
const EXAMPLE = '6ba7b810-9dad-11d1-80b4-00c04fd430c8';

// One definition of a v1 UUID for both layers (the archive keys renders by it too).
export { isTimeUuid };

/**
 * The canonical (lowercase) form of a v1 UUID.
 * @throws InvalidArgumentError naming `field` when it is not a time-based UUID.
 */
export function checkTimeUuid(tid: unknown, field = 'tid'): string {
  if (isTimeUuid(tid)) return tid.toLowerCase();
  if (typeof tid !== 'string') throw new InvalidArgumentError(`${field} must be a time-based (version 1) UUID string such as ${EXAMPLE}, got ${tid === null ? 'null' : typeof tid}`);
  throw new InvalidArgumentError(`${field} is ${JSON.stringify(tid.length > 64 ? tid.slice(0, 64) + '…' : tid)}; it must be a time-based (version 1) UUID such as ${EXAMPLE}`);
}

/** The 60-bit timestamp of a canonical v1 UUID, in 100-ns intervals since 1582-10-15. */
export function timestampOf(tid: string): bigint {
  const timeLow = BigInt('0x' + tid.slice(0, 8));
  const timeMid = BigInt('0x' + tid.slice(9, 13));
  const timeHi = BigInt('0x' + tid.slice(15, 18));
  return (timeHi << 48n) | (timeMid << 32n) | timeLow;
}

/** The Unix time in milliseconds (rounded down) at which a canonical v1 UUID was made. */
export function timeOf(tid: string): number {
  return Number(timestampOf(tid) / TICKS_PER_MS - GREGORIAN_OFFSET_MS);
}

/**
 * The v1 UUID of a given Unix time in milliseconds (with `ticks` 100-ns intervals added, 0–9,999),
 * clock sequence and node: the same arguments always give the same id, so an import may derive ids
 * from the times it reads and stay idempotent.
 * @throws InvalidArgumentError when the time is out of the UUID's range or an argument is malformed.
 */
export function timeUuidOf(ms: number, clockSequence: number, node: Uint8Array, ticks = 0): string {
  if (!Number.isSafeInteger(ms)) throw new InvalidArgumentError(`time is ${ms}; it must be an integer number of milliseconds`);
  if (!Number.isInteger(ticks) || ticks < 0 || ticks >= 10_000) throw new InvalidArgumentError(`ticks is ${ticks}; it must be an integer from 0 to 9999`);
  if (!Number.isInteger(clockSequence) || clockSequence < 0 || clockSequence > 0x3fff) throw new InvalidArgumentError(`clock sequence is ${clockSequence}; it must be an integer from 0 to 16383`);
  if (!(node instanceof Uint8Array) || node.length !== 6) throw new InvalidArgumentError('node must be 6 bytes');
  const timestamp = (BigInt(ms) + GREGORIAN_OFFSET_MS) * TICKS_PER_MS + BigInt(ticks);
  if (timestamp < 0n || timestamp > MAX_TIMESTAMP) throw new InvalidArgumentError(`time is ${ms} ms; a time-based UUID holds times from 1582-10-15 to 5236-03-31`);
  return format(timestamp, clockSequence, node);
}

function hex(value: bigint | number, digits: number): string {
  return value.toString(16).padStart(digits, '0');
}

function format(timestamp: bigint, clockSequence: number, node: Uint8Array): string {
  const timeLow = timestamp & 0xffffffffn;
  const timeMid = (timestamp >> 32n) & 0xffffn;
  const timeHi = (timestamp >> 48n) & 0x0fffn;
  const clockHi = 0x80 | ((clockSequence >> 8) & 0x3f);
  const clockLow = clockSequence & 0xff;
  return `${hex(timeLow, 8)}-${hex(timeMid, 4)}-1${hex(timeHi, 3)}-${hex(clockHi, 2)}${hex(clockLow, 2)}-${Buffer.from(node).toString('hex')}`;
}

/**
 * Makes v1 UUIDs from a clock: strictly increasing (by timestamp) for one generator, even when the
 * clock stands still or goes back (the timestamp then moves on by one 100-ns tick from the last).
 */
export class TimeUuidGenerator {
  private readonly clockSequence: number;
  private readonly node: Buffer;
  private last = -1n;

  constructor(private readonly clock: () => number) {
    const random = randomBytes(8);
    this.clockSequence = random.readUInt16BE(0) & 0x3fff;
    this.node = random.subarray(2, 8);
    this.node[0] |= 0x01; // the multicast bit: not a MAC address (RFC 4122 §4.5)
  }

  /** A new v1 UUID at the clock's time (or just after the last one made). */
  next(): string {
    let timestamp = (BigInt(Math.floor(this.clock())) + GREGORIAN_OFFSET_MS) * TICKS_PER_MS;
    if (timestamp <= this.last) timestamp = this.last + 1n;
    if (timestamp < 0n || timestamp > MAX_TIMESTAMP) throw new InvalidArgumentError(`clock reads ${this.clock()} ms; a time-based UUID holds times from 1582-10-15 to 5236-03-31`);
    this.last = timestamp;
    return format(timestamp, this.clockSequence, this.node);
  }
}
