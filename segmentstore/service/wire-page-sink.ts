/**
 * The page sink of the gRPC service: it writes a keyed family's iterator page straight into the bytes
 * of an `IterateResponse` from the ranges of the chunk records the engine reads
 * (`SegmentEngine.iterateInto`), under the caps every page sink applies.
 *
 * Why: serving a page of 1,000 entries, the store made an entry object and two views per entry when
 * decoding chunks, a page item and a sequence string per entry for the response, then measured and
 * copied them all again to encode it. Written from the record ranges, the page costs one output
 * buffer and a few numbers per entry. The bytes are those `encodeIterateResponse` (wire-codec.ts)
 * makes of the engine's object page (test/unit/segmentstore/page-sink.test.ts).
 */
import type { IterateResponse } from '../../proto/messages';
import { varintSize, writeVarint } from '../../proto/wire';
import { copyRange } from '../storage/chunks/chunk-codec';
import { CappedPageSink, PageShape } from '../storage/read/page-sink';
import type { IterateInput } from '../storage/read/read-validation';
import type { SegmentEngine } from '../storage/segment-engine';

/** Digits of `n` in decimal. */
function decimalLength(n: number): number {
  let len = 1;
  while (n >= 10) {
    n = Math.floor(n / 10);
    len++;
  }
  return len;
}

/** Tag + length + payload of an Entry's bytes field (left out when empty, as proto3 does). */
const bytesField = (len: number): number => (len > 0 ? 1 + varintSize(len) + len : 0);

/** Payload length of an Entry: found, key, value and a sequence of `digits` decimal digits. */
const entryLength = (keyLen: number, valueLen: number, digits: number): number => 2 + bytesField(keyLen) + bytesField(valueLen) + 2 + digits;

/** Writes bytes field `field` holding `record[start, end)` at `at` (nothing when empty); returns the offset after it. */
function writeBytesField(out: Buffer, at: number, field: number, record: Buffer, start: number, end: number): number {
  const len = end - start;
  if (len <= 0) return at;
  out[at++] = (field << 3) | 2;
  at = writeVarint(out, at, len);
  return copyRange(out, at, record, start, end);
}

/** Writes the `digits` decimal digits of `n` at `at`; returns the offset after them. */
function writeDecimal(out: Buffer, at: number, n: number, digits: number): number {
  for (let d = at + digits - 1; d >= at; d--) {
    out[d] = 0x30 + (n % 10);
    n = Math.floor(n / 10);
  }
  return at + digits;
}

/** Writes one `items` field (an Entry) at `at`; returns the offset after it. */
function writeEntry(out: Buffer, at: number, record: Buffer, keyStart: number, keyEnd: number, valueStart: number, valueEnd: number, sequence: number): number {
  const digits = decimalLength(sequence);
  out[at++] = (1 << 3) | 2;
  at = writeVarint(out, at, entryLength(keyEnd - keyStart, valueEnd - valueStart, digits));
  out[at++] = (1 << 3) | 0; // found = true
  out[at++] = 1;
  at = writeBytesField(out, at, 2, record, keyStart, keyEnd);
  at = writeBytesField(out, at, 3, record, valueStart, valueEnd);
  out[at++] = (4 << 3) | 2;
  out[at++] = digits;
  return writeDecimal(out, at, sequence, digits);
}

/**
 * Writes an `IterateResponse` (items: repeated Entry = 1, done = 2; Entry: found = 1, key = 2,
 * value = 3, sequence = 4 as decimal text) from the ranges it collected.
 */
export class WirePageSink extends CappedPageSink<Buffer> {
  /** Per entry: record index, key start, key end, value start, value end, sequence. */
  private readonly ranges: number[] = [];
  private readonly records: Buffer[] = [];

  protected take(record: Buffer, keyStart: number, keyEnd: number, valueStart: number, valueEnd: number, sequence: number): void {
    if (this.records[this.records.length - 1] !== record) this.records.push(record);
    this.ranges.push(this.records.length - 1, keyStart, keyEnd, valueStart, valueEnd, sequence);
  }

  finish(done: boolean): Buffer {
    const r = this.ranges;
    const out = Buffer.allocUnsafe(this.encodedLength(done));
    let at = 0;
    for (let i = 0; i < r.length; i += 6) at = writeEntry(out, at, this.records[r[i]], r[i + 1], r[i + 2], r[i + 3], r[i + 4], r[i + 5]);
    if (done) {
      out[at++] = (2 << 3) | 0;
      out[at++] = 1;
    }
    return out;
  }

  /** Bytes of the response: every entry's `items` field, and `done` when set. */
  private encodedLength(done: boolean): number {
    const r = this.ranges;
    let size = done ? 2 : 0;
    for (let i = 0; i < r.length; i += 6) {
      const entry = entryLength(r[i + 2] - r[i + 1], r[i + 4] - r[i + 3], decimalLength(r[i + 5]));
      size += 1 + varintSize(entry) + entry;
    }
    return size;
  }
}

/** Makes the {@link WirePageSink} of a page (a `PageSinkFactory`). */
export function wirePageSink(shape: PageShape): WirePageSink {
  return new WirePageSink(shape.maxItems, shape.pageBytes, shape.includeValues);
}

/**
 * One iterator page as the service sends it: a keyed family's page as the bytes of its
 * `IterateResponse` ({@link WirePageSink}), a family-less page as the message.
 */
export function iterateForWire(engine: SegmentEngine, req: IterateInput): Promise<IterateResponse | Buffer> {
  return engine.iterateInto(req, wirePageSink);
}
