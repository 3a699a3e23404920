/**
 * The segment store's hand-written decoder of `ExecuteRequest`, the hottest message it reads: the body
 * of an Execute call, and the request of an `ExecuteStreamRequest` (see wire-codec.ts).
 *
 * Why: profiles of W1/W4 showed the generic loader (protobufjs `toObject` with defaults) spending most
 * of its time allocating a fresh empty Buffer for every unset bytes field of every Modification. This
 * decoder produces exactly the shape `proto/load.ts` produces (camelCase, enums as names, uint64 as
 * strings, bytes as Buffer, defaults filled in, the oneof's virtual field), so handlers cannot tell the
 * difference; the equivalence is tested against the loader in test/unit/segmentstore/wire-codec.test.ts.
 */
import { CONDITION_KIND_NAMES, enumName, MODIFICATION_TYPE_NAMES } from '../../proto/enums';
import { segmentStoreService } from '../../proto/load';
import { Reader } from '../../proto/wire';
import { WireModification } from './wire-modification';

const EMPTY: Buffer = Buffer.alloc(0);

/** Strings of at most this many bytes are compared by a JS loop (cheaper than a native call); longer ones by `Buffer.compare`. */
const SHORT_COMPARE = 32;

/**
 * The last value of one string field within one decoded message, reused while its bytes repeat.
 *
 * Why: the modifications of a batch share one key family (and nearly always one ttl), and W4's
 * profile showed UTF-8 decoding the same family for each of a batch's 100 modifications; comparing a
 * few bytes in JS costs a fraction of a native decode. Positions refer to the buffer of the one
 * message being decoded, so an instance must not outlive that decode.
 */
class RepeatedString {
  private start = 0;
  private end = 0;
  private text = '';

  read(r: Reader): string {
    const end = r.field();
    const start = r.pos;
    r.pos = end;
    const len = end - start;
    if (len === 0) return '';
    if (len === this.end - this.start && sameBytes(r.buf, start, this.start, len)) return this.text;
    this.start = start;
    this.end = end;
    this.text = r.buf.toString('utf8', start, end);
    return this.text;
  }
}

/** Whether `buf` holds the same `len` bytes at `a` as at `b`. */
function sameBytes(buf: Buffer, a: number, b: number, len: number): boolean {
  if (len > SHORT_COMPARE) return buf.compare(buf, a, a + len, b, b + len) === 0;
  for (let i = 0; i < len; i++) if (buf[a + i] !== buf[b + i]) return false;
  return true;
}

/** The repeated string fields of one message's modifications and key refs. */
interface Strings {
  family: RepeatedString;
  ttlMs: RepeatedString;
  /** Of conditions: those of one batch name one segment. */
  segmentId: RepeatedString;
}

/** The Condition field whose length prefix `r` is at. */
function decodeCondition(r: Reader, strings: Strings): Record<string, unknown> {
  const c = { kind: 'NONE' as string | number, segmentId: '', sequence: '' };
  const outer = r.enter();
  while (r.more()) {
    const tag = r.varint();
    const field = tag >>> 3;
    if (field === 1 && (tag & 7) === 0) c.kind = enumName(CONDITION_KIND_NAMES, r.varint());
    else if (field === 2 && (tag & 7) === 2) c.segmentId = strings.segmentId.read(r);
    else if (field === 3 && (tag & 7) === 2) c.sequence = r.string();
    else r.skip(tag & 7);
  }
  r.leave(outer);
  return c;
}

/**
 * A Modification, read by `r` narrowed to it (see Reader.enter). Its key and value stay ranges of
 * the request (WireModification); read through `key` and `value` it is what the loader decodes.
 */
function decodeModification(r: Reader, strings: Strings): WireModification {
  const m = new WireModification(r.buf);
  while (r.more()) {
    const tag = r.varint();
    const field = tag >>> 3;
    const wt = tag & 7;
    if (field === 1 && wt === 0) m.type = enumName(MODIFICATION_TYPE_NAMES, r.varint());
    else if (wt !== 2 || field < 2 || field > 9) r.skip(wt);
    else if (field === 2) m.family = strings.family.read(r);
    else if (field === 3) {
      m.keyEnd = r.field();
      m.keyStart = r.pos;
      r.pos = m.keyEnd;
    } else if (field === 4) {
      m.valueEnd = r.field();
      m.valueStart = r.pos;
      r.pos = m.valueEnd;
    } else if (field === 5) m.condition = decodeCondition(r, strings);
    else if (field === 6) m.ttlMs = strings.ttlMs.read(r);
    else if (field === 7) m.rangeFrom = r.bytes();
    else if (field === 8) m.rangeTo = r.bytes();
    else m.rangePrefix = r.bytes();
  }
  return m;
}

/** UpdateRequest (repeated field 2 of Modification) or GetRequest (repeated field 2 of KeyRef). */
function decodeSegmentRequest(r: Reader, item: (r: Reader, strings: Strings) => object, listName: 'modifications' | 'keys', strings: Strings): Record<string, unknown> {
  const list: object[] = [];
  let segmentId = '';
  while (r.more()) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 2)) segmentId = r.string();
    else if (tag === ((2 << 3) | 2)) {
      const outer = r.enter();
      list.push(item(r, strings));
      r.leave(outer);
    } else r.skip(tag & 7);
  }
  return { [listName]: list, segmentId };
}

/** A KeyRef, read by `r` narrowed to it. */
function decodeKeyRef(r: Reader, strings: Strings): Record<string, unknown> {
  const k = { family: '', key: EMPTY };
  while (r.more()) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 2)) k.family = strings.family.read(r);
    else if (tag === ((2 << 3) | 2)) k.key = r.bytes();
    else r.skip(tag & 7);
  }
  return k;
}

/**
 * A SubRequest (update = 1, get = 2, iterate = 3), read by `r` narrowed to it, with its oneof's
 * virtual field. The small IterateRequest is decoded by the loader's own decoder.
 */
function decodeSubRequest(r: Reader, strings: Strings): Record<string, unknown> {
  const s: Record<string, unknown> = {};
  while (r.more()) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 2)) s.update = decodeSegmentRequest(r.sub(), decodeModification, 'modifications', strings);
    else if (tag === ((2 << 3) | 2)) s.get = decodeSegmentRequest(r.sub(), decodeKeyRef, 'keys', strings);
    else if (tag === ((3 << 3) | 2)) {
      const sub = r.sub();
      s.iterate = segmentStoreService().Iterate.requestDeserialize(r.buf.subarray(sub.pos, sub.end));
    } else r.skip(tag & 7);
  }
  // The loader names the set member of the oneof (a request sets one).
  if (s.iterate) s.request = 'iterate';
  else if (s.get) s.request = 'get';
  else if (s.update) s.request = 'update';
  return s;
}

/** Decodes an `ExecuteRequest` exactly as the loader would. */
export function decodeExecuteRequest(buf: Buffer): { requests: Record<string, unknown>[] } {
  const r = new Reader(buf, 0, buf.length);
  const requests: Record<string, unknown>[] = [];
  const strings: Strings = { family: new RepeatedString(), ttlMs: new RepeatedString(), segmentId: new RepeatedString() };
  while (r.more()) {
    const tag = r.varint();
    if (tag === ((1 << 3) | 2)) requests.push(decodeSubRequest(r.sub(), strings));
    else r.skip(tag & 7);
  }
  return { requests };
}
