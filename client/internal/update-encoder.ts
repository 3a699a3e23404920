/**
 * Encodes the modifications of one batch (an `UpdateRequest`'s repeated field 2) once, as the batch
 * is validated. A batch's modifications share one key family, so its field is encoded once, not per
 * modification; sizes are summed as modifications are added, and the bytes are written in one pass
 * into one buffer. Each Execute call that carries the batch (retries included) copies that block
 * (wire-codec.ts) instead of encoding objects again.
 *
 * Why: building a `Modification` object per entry and encoding it field by field (the family string
 * re-encoded every time) was most of the client's CPU per entry in putAll (bench W4). The bytes are
 * exactly those of the equivalent `Modification` objects (test/unit/client/update-encoder.test.ts).
 */
import { CONDITION_KINDS, MODIFICATION_TYPES } from '../../proto/enums';
import { fieldSize, varintSize, writeUtf8, writeVarint } from '../../proto/wire';
import type { Version } from '../version';

const EMPTY: Buffer = Buffer.alloc(0);

/**
 * The wire ttl of a modification that never expires: the field is left out (proto3's default), which
 * the store reads as no expiry. Sending "0" said the same in 3 more bytes per modification, and the
 * store decoded one string more for each.
 */
export const NO_TTL = '';

/** Field tags (number << 3 | wire type) of `UpdateRequest.modifications`, `Modification` and `Condition`. */
const MODIFICATION_TAG = (2 << 3) | 2;
const TYPE_TAG = (1 << 3) | 0;
const FAMILY_TAG = (2 << 3) | 2;
const KEY_TAG = (3 << 3) | 2;
const VALUE_TAG = (4 << 3) | 2;
const CONDITION_TAG = (5 << 3) | 2;
const TTL_TAG = (6 << 3) | 2;
const RANGE_TAGS = [(7 << 3) | 2, (8 << 3) | 2, (9 << 3) | 2] as const;
const CONDITION_KIND_TAG = (1 << 3) | 0;
const CONDITION_SEGMENT_TAG = (2 << 3) | 2;
const CONDITION_SEQUENCE_TAG = (3 << 3) | 2;
/** The `Condition` field of NOT_EXISTS. */
const NOT_EXISTS_FIELD = Buffer.from([CONDITION_TAG, 2, CONDITION_KIND_TAG, CONDITION_KINDS.NOT_EXISTS]);

/** The modifications of one `UpdateRequest`, encoded: one field-2 entry per modification, in order. */
export class EncodedModifications {
  constructor(
    /** The entries, each with its tag and length prefix. */
    readonly bytes: Buffer,
    /** The wire type number of each modification (proto/enums.ts's MODIFICATION_TYPES). */
    readonly types: Uint8Array,
  ) {}
}

/** A length-delimited field, tag and length included (empty when `text` is: defaults are left out). */
function stringField(tag: number, text: string): Buffer {
  if (!text) return EMPTY;
  const length = Buffer.byteLength(text, 'utf8');
  const out = Buffer.allocUnsafe(fieldSize(length));
  // Ids, sequences, ttls and most families are short ASCII: writeUtf8 copies those without a native call.
  writeUtf8(out, writeVarint(out, writeByte(out, 0, tag), length), text, length);
  return out;
}

/** The `Condition` field of a version condition (empty for none). */
function conditionField(version: Version | undefined): Buffer {
  if (!version || version.isNoVersion) return EMPTY;
  if (version.isNotExists) return NOT_EXISTS_FIELD;
  const segment = stringField(CONDITION_SEGMENT_TAG, version.segmentId);
  const sequence = stringField(CONDITION_SEQUENCE_TAG, version.sequence);
  const payload = 2 + segment.length + sequence.length;
  const out = Buffer.allocUnsafe(1 + varintSize(payload) + payload);
  let at = writeVarint(out, writeByte(out, 0, CONDITION_TAG), payload);
  at = writeByte(out, writeByte(out, at, CONDITION_KIND_TAG), CONDITION_KINDS.VERSION);
  segment.copy(out, at);
  sequence.copy(out, at + segment.length);
  return out;
}

function writeByte(buf: Buffer, at: number, b: number): number {
  buf[at] = b;
  return at + 1;
}

/** Copies `src` into `buf` at `at`; a loop beats `set` for the short keys most batches hold. */
function writeBytes(buf: Buffer, at: number, src: Uint8Array): number {
  const n = src.length;
  if (n > 32) {
    buf.set(src, at);
    return at + n;
  }
  for (let i = 0; i < n; i++) buf[at + i] = src[i];
  return at + n;
}

/** A bytes field, tag and length prefix included; nothing for empty bytes (the default). */
function writeBytesField(buf: Buffer, at: number, tag: number, src: Uint8Array): number {
  if (src.length === 0) return at;
  return writeBytes(buf, writeVarint(buf, writeByte(buf, at, tag), src.length), src);
}

const bytesFieldSize = (b: Uint8Array): number => (b.length === 0 ? 0 : fieldSize(b.length));

/** Collects the modifications of one batch of one key family, then encodes them in one buffer. */
export class UpdateEncoder {
  private readonly familyField: Buffer;
  private readonly types: Uint8Array;
  private readonly keys: Uint8Array[];
  private readonly values: Uint8Array[];
  private readonly conditions: Buffer[];
  private readonly ttls: Buffer[];
  private readonly sizes: number[];
  /** REMOVE_RANGE bounds (from, to, prefix) by index; allocated on the first range. */
  private ranges: (readonly [Uint8Array, Uint8Array, Uint8Array])[] | undefined;
  /** The last ttl added and its field: a batch's modifications nearly always share one. */
  private lastTtl = NO_TTL;
  private lastTtlField = EMPTY;
  private count = 0;
  private total = 0;
  /** Key + value bytes added (what the batch limits count). */
  dataBytes = 0;

  /** @param family the batch's key family ("" for none); `capacity` the number of modifications. */
  constructor(family: string, capacity: number) {
    this.familyField = stringField(FAMILY_TAG, family);
    this.types = new Uint8Array(capacity);
    this.keys = new Array<Uint8Array>(capacity);
    this.values = new Array<Uint8Array>(capacity);
    this.conditions = new Array<Buffer>(capacity);
    this.ttls = new Array<Buffer>(capacity);
    this.sizes = new Array<number>(capacity);
  }

  /** Adds a PUT, INSERT or REMOVE; `ttlMs` is the wire string ({@link NO_TTL} = never expires). */
  add(type: number, key: Uint8Array, value: Uint8Array, condition: Version | undefined, ttlMs: string): void {
    const i = this.count++;
    if (ttlMs !== this.lastTtl) {
      this.lastTtl = ttlMs;
      this.lastTtlField = stringField(TTL_TAG, ttlMs);
    }
    const conditionBytes = conditionField(condition);
    this.dataBytes += key.length + value.length;
    this.types[i] = type;
    this.keys[i] = key;
    this.values[i] = value;
    this.conditions[i] = conditionBytes;
    this.ttls[i] = this.lastTtlField;
    // The type field is left out for PUT (the default); the others are one-byte varints.
    const size = (type === MODIFICATION_TYPES.PUT ? 0 : 2) + this.familyField.length + bytesFieldSize(key) + bytesFieldSize(value) + conditionBytes.length + this.lastTtlField.length;
    this.sizes[i] = size;
    this.total += 1 + varintSize(size) + size;
  }

  /** Adds a REMOVE_RANGE with its (possibly empty, i.e. open) bounds. */
  addRange(from: Uint8Array, to: Uint8Array, prefix: Uint8Array): void {
    const i = this.count;
    this.add(MODIFICATION_TYPES.REMOVE_RANGE, EMPTY, EMPTY, undefined, NO_TTL);
    this.ranges ??= [];
    this.ranges[i] = [from, to, prefix];
    const extra = bytesFieldSize(from) + bytesFieldSize(to) + bytesFieldSize(prefix);
    this.total += varintSize(this.sizes[i] + extra) - varintSize(this.sizes[i]) + extra;
    this.sizes[i] += extra;
  }

  /** Writes every modification added, in order. */
  finish(): EncodedModifications {
    const buf = Buffer.allocUnsafe(this.total);
    const family = this.familyField;
    let at = 0;
    for (let i = 0; i < this.count; i++) {
      at = writeVarint(buf, writeByte(buf, at, MODIFICATION_TAG), this.sizes[i]);
      if (this.types[i] !== MODIFICATION_TYPES.PUT) at = writeByte(buf, writeByte(buf, at, TYPE_TAG), this.types[i]);
      at = writeBytes(buf, at, family);
      at = writeBytesField(buf, at, KEY_TAG, this.keys[i]);
      at = writeBytesField(buf, at, VALUE_TAG, this.values[i]);
      at = writeBytes(buf, at, this.conditions[i]);
      at = writeBytes(buf, at, this.ttls[i]);
      const range = this.ranges?.[i];
      if (range) for (let r = 0; r < 3; r++) at = writeBytesField(buf, at, RANGE_TAGS[r], range[r]);
    }
    if (at !== this.total) throw new Error(`internal error: encoded ${at} bytes of modifications, sized ${this.total}`);
    return new EncodedModifications(buf, this.count === this.types.length ? this.types : this.types.subarray(0, this.count));
  }
}
