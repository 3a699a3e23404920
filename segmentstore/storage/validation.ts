/**
 * Request validation of the segment engine's updates: every check that needs no storage, done before
 * anything is staged (read requests: read-validation.ts). Failures are INVALID_ARGUMENT faults whose
 * message names the field and the limit ("modifications[0].family is 3000 bytes; the maximum is
 * 2048") and whose index is the offending modification or key.
 */
import { CONDITION_KIND_NAMES, MODIFICATION_TYPE_NAMES } from '../../proto/enums';
import { MAX_BATCH_BYTES, MAX_BATCH_ITEMS, MAX_KEY_FAMILY_LENGTH, MAX_KEY_LENGTH, MAX_VALUE_LENGTH } from '../../proto/limits';
import { invalidArgument } from '../../server-kit/fault';
import type { ConditionKind, ModificationType } from '../../proto/messages';

/** Largest ttlMs accepted (2^48 ms, about 8,900 years), so expiry times stay exact integers. */
export const MAX_TTL_MS = 2 ** 48;
const U64_MAX = (1n << 64n) - 1n;
const DECIMAL = /^(0|[1-9][0-9]{0,19})$/;
const MOD_TYPES: ReadonlySet<string> = new Set(MODIFICATION_TYPE_NAMES);
const COND_KINDS: ReadonlySet<string> = new Set(CONDITION_KIND_NAMES);
const EMPTY = Buffer.alloc(0);
const NO_CONDITION = { condition: 'NONE', conditionSegmentId: '', conditionSequence: 0 } as const;

/** A modification as callers may send it: every field optional (proto defaults apply). */
export interface ModificationInput {
  type?: ModificationType | string | number;
  family?: string;
  key?: Uint8Array;
  value?: Uint8Array;
  condition?: { kind?: ConditionKind | string | number; segmentId?: string; sequence?: string } | null;
  ttlMs?: string | number;
  rangeFrom?: Uint8Array;
  rangeTo?: Uint8Array;
  rangePrefix?: Uint8Array;
}

/** `source[start, end)` as a Buffer sharing its memory (`source` itself when that is all of it). */
export function viewOf(source: Buffer, start: number, end: number): Buffer {
  if (end === start) return EMPTY;
  return start === 0 && end === source.length ? source : Buffer.from(source.buffer, source.byteOffset + start, end - start);
}

/**
 * A modification whose key and value are ranges of a buffer it holds rather than Buffers of their
 * own: what the service's wire decoder hands over (segmentstore/service/wire-modification.ts), so
 * that no view is made per modification. Validation and the chunk merge read the ranges; `key` and
 * `value`, when read, must be views of the same bytes.
 */
export interface RangedModification extends ModificationInput {
  /** The bytes the key and value ranges refer to. */
  readonly source: Buffer;
  readonly keyStart: number;
  readonly keyEnd: number;
  readonly valueStart: number;
  readonly valueEnd: number;
}

/**
 * A validated modification, ready for condition checks and staging. Its key is
 * `keySource[keyStart, keyEnd)` and its value `valueSource[valueStart, valueEnd)`: the hot paths
 * (batch checks, chunk merge) read the ranges; `key` and `value` make views on first use.
 */
export class CheckedModification {
  private keyView: Buffer | undefined;
  private valueView: Buffer | undefined;

  constructor(
    readonly type: ModificationType,
    readonly family: string,
    readonly keySource: Buffer,
    readonly keyStart: number,
    readonly keyEnd: number,
    readonly valueSource: Buffer,
    readonly valueStart: number,
    readonly valueEnd: number,
    readonly condition: ConditionKind,
    /** Segment id of a VERSION condition. */
    readonly conditionSegmentId: string,
    /** Sequence of a VERSION condition; -1 when it is beyond any sequence this store hands out. */
    readonly conditionSequence: number,
    readonly ttlMs: number,
    readonly rangeFrom: Buffer,
    readonly rangeTo: Buffer,
    readonly rangePrefix: Buffer,
  ) {}

  /** An unconditional REMOVE of `key` within `family` (what the expiry sweeper stages). */
  static removal(family: string, key: Buffer): CheckedModification {
    return new CheckedModification('REMOVE', family, key, 0, key.length, EMPTY, 0, 0, 'NONE', '', 0, 0, EMPTY, EMPTY, EMPTY);
  }

  get keyLength(): number {
    return this.keyEnd - this.keyStart;
  }

  get valueLength(): number {
    return this.valueEnd - this.valueStart;
  }

  get key(): Buffer {
    return (this.keyView ??= viewOf(this.keySource, this.keyStart, this.keyEnd));
  }

  get value(): Buffer {
    return (this.valueView ??= viewOf(this.valueSource, this.valueStart, this.valueEnd));
  }
}

/** True when `s` is a canonical decimal unsigned 64-bit integer. */
export function isU64(s: unknown): s is string {
  return typeof s === 'string' && DECIMAL.test(s) && BigInt(s) <= U64_MAX;
}

/** Checks a segment id; returns it. */
export function checkSegmentId(segmentId: unknown, field = 'segmentId'): string {
  if (!isU64(segmentId)) {
    throw invalidArgument(`${field} ${JSON.stringify(segmentId ?? '')} is not a decimal unsigned 64-bit integer`);
  }
  return segmentId;
}

export function asBuffer(bytes: Uint8Array | undefined | null): Buffer {
  if (!bytes || bytes.length === 0) return EMPTY;
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** The field name of item `index` of `list` (`modifications[2]`), or '' for a request-level key. */
function fieldName(list: string, index: number): string {
  return list === '' ? '' : `${list}[${index}]`;
}

/**
 * Checks family and key lengths of one key reference (its key `keyLength` bytes), item `index` of
 * `list` ('' when the key is not in a list). Field names are built only for an error: this runs for
 * every modification.
 */
export function checkKey(family: unknown, keyLength: number, list: string, index: number, allowEmptyKey = false): string {
  if (family !== undefined && family !== null && typeof family !== 'string') {
    throw invalidArgument(`${dotted(list, index)}family must be a string`, index);
  }
  const fam = (family as string | undefined) ?? '';
  // UTF-8 takes at most 3 bytes per UTF-16 unit: when that bound keeps within both limits, no exact
  // count is needed (0 passes the checks below as the exact count would).
  const bounded = fam.length * 3 <= MAX_KEY_FAMILY_LENGTH && fam.length * 3 + keyLength <= MAX_KEY_LENGTH;
  const famBytes = bounded ? 0 : Buffer.byteLength(fam, 'utf8');
  if (famBytes > MAX_KEY_FAMILY_LENGTH) {
    throw invalidArgument(`${dotted(list, index)}family is ${famBytes} bytes; the maximum is ${MAX_KEY_FAMILY_LENGTH}`, index);
  }
  if (!allowEmptyKey && keyLength === 0) throw invalidArgument(`${dotted(list, index)}key is empty`, index);
  if (famBytes + keyLength > MAX_KEY_LENGTH) {
    throw invalidArgument(`${list === '' ? '' : fieldName(list, index) + ': '}family + key is ${famBytes + keyLength} bytes; the maximum is ${MAX_KEY_LENGTH}`, index);
  }
  return fam;
}

function dotted(list: string, index: number): string {
  return list === '' ? '' : `${fieldName(list, index)}.`;
}

function checkTtl(ttl: unknown, index: number): number {
  if (ttl === undefined || ttl === null || ttl === '' || ttl === '0' || ttl === 0) return 0;
  const field = fieldName('modifications', index);
  const s = String(ttl);
  if (!isU64(s)) throw invalidArgument(`${field}.ttlMs ${JSON.stringify(s)} is not a decimal unsigned 64-bit integer`, index);
  const n = Number(s);
  if (n > MAX_TTL_MS) throw invalidArgument(`${field}.ttlMs is ${s}; the maximum is ${MAX_TTL_MS}`, index);
  return n;
}

function checkCondition(mod: ModificationInput, type: ModificationType, i: number): Pick<CheckedModification, 'condition' | 'conditionSegmentId' | 'conditionSequence'> {
  const c = mod.condition;
  const kind = c?.kind ?? 'NONE';
  if (kind === 'NONE' && !c?.segmentId) return NO_CONDITION;
  const field = fieldName('modifications', i);
  if (typeof kind !== 'string' || !COND_KINDS.has(kind)) {
    throw invalidArgument(`${field}.condition.kind ${JSON.stringify(kind)} is not one of ${CONDITION_KIND_NAMES.join(', ')}`, i);
  }
  if (kind !== 'NONE' && (type === 'REMOVE_RANGE' || (type === 'INSERT' && kind === 'VERSION'))) {
    throw invalidArgument(`${field}.condition ${kind} is not allowed on ${type}`, i);
  }
  if (kind !== 'VERSION') return { condition: kind as ConditionKind, conditionSegmentId: '', conditionSequence: 0 };
  const segmentId = checkSegmentId(c?.segmentId, `${field}.condition.segmentId`);
  const sequence = c?.sequence;
  if (!isU64(sequence)) {
    throw invalidArgument(`${field}.condition.sequence ${JSON.stringify(sequence ?? '')} is not a decimal unsigned 64-bit integer`, i);
  }
  const n = Number(sequence);
  return { condition: 'VERSION', conditionSegmentId: segmentId, conditionSequence: Number.isSafeInteger(n) ? n : -1 };
}

/** Checks the type of modification `i` (omitted: PUT); returns it. */
function checkType(type: unknown, i: number): ModificationType {
  // PUT (the usual) skips the set lookup.
  if (type !== 'PUT' && (typeof type !== 'string' || !MOD_TYPES.has(type))) {
    throw invalidArgument(`${fieldName('modifications', i)}.type ${JSON.stringify(type)} is not one of ${MODIFICATION_TYPE_NAMES.join(', ')}`, i);
  }
  return type as ModificationType;
}

/** Whether `mod` hands its key and value over as ranges (a {@link RangedModification}). */
function isRanged(mod: ModificationInput): mod is RangedModification {
  return (mod as Partial<RangedModification>).source !== undefined;
}

/** Checks modification `i` of an Update; returns it with its key and value as ranges. */
function checkModification(mod: ModificationInput, i: number): CheckedModification {
  if (!mod || typeof mod !== 'object') throw invalidArgument(`${fieldName('modifications', i)} is not a modification`, i);
  const t = checkType(mod.type ?? 'PUT', i);
  const hasValue = t === 'PUT' || t === 'INSERT';
  // Decoded requests hand over ranges of their bytes; anything else, its own key and value Buffers.
  let keySource: Buffer, keyStart: number, keyEnd: number, valueSource: Buffer, valueStart: number, valueEnd: number;
  if (isRanged(mod)) {
    keySource = valueSource = mod.source;
    keyStart = mod.keyStart;
    keyEnd = mod.keyEnd;
    valueStart = hasValue ? mod.valueStart : 0;
    valueEnd = hasValue ? mod.valueEnd : 0;
  } else {
    keySource = asBuffer(mod.key);
    valueSource = hasValue ? asBuffer(mod.value) : EMPTY;
    keyStart = valueStart = 0;
    keyEnd = keySource.length;
    valueEnd = valueSource.length;
  }
  const keyLength = keyEnd - keyStart;
  const valueLength = valueEnd - valueStart;
  if (t === 'REMOVE_RANGE' && keyLength > 0) {
    throw invalidArgument(`${fieldName('modifications', i)}.key must be empty for REMOVE_RANGE (use rangeFrom, rangeTo, rangePrefix)`, i);
  }
  const family = checkKey(mod.family, keyLength, 'modifications', i, t === 'REMOVE_RANGE');
  if (valueLength > MAX_VALUE_LENGTH) {
    throw invalidArgument(`${fieldName('modifications', i)}.value is ${valueLength} bytes; the maximum is ${MAX_VALUE_LENGTH}`, i);
  }
  const c = checkCondition(mod, t, i);
  return new CheckedModification(
    t,
    family,
    keySource,
    keyStart,
    keyEnd,
    valueSource,
    valueStart,
    valueEnd,
    c.condition,
    c.conditionSegmentId,
    c.conditionSequence,
    hasValue ? checkTtl(mod.ttlMs, i) : 0,
    asBuffer(mod.rangeFrom),
    asBuffer(mod.rangeTo),
    asBuffer(mod.rangePrefix),
  );
}

/**
 * One key family per batch; a family-less batch holds a single key (DESIGN §2: multi-key updates are
 * atomic only within a family, and a family-less multi-key call is refused, as the client does), so a
 * range removal needs a family too.
 */
function checkBatchShape(checked: CheckedModification[]): void {
  let bytes = 0;
  const family = checked.length > 0 ? checked[0].family : '';
  if (family === '') {
    if (checked.length > 1) {
      throw invalidArgument(`modifications hold ${checked.length} family-less modifications; a batch without a key family holds one key (give the batch a family)`, 1);
    }
    if (checked.length === 1 && checked[0].type === 'REMOVE_RANGE') {
      throw invalidArgument('modifications[0] is a REMOVE_RANGE without a family; a range removal needs a key family', 0);
    }
  }
  for (let i = 0; i < checked.length; i++) {
    const m = checked[i];
    bytes += m.keyLength + m.valueLength;
    if (m.family !== family) {
      throw invalidArgument(
        `modifications[${i}].family ${JSON.stringify(m.family)} differs from modifications[0].family ${JSON.stringify(family)}; a batch of several modifications must keep to one key family`,
        i,
      );
    }
  }
  if (bytes > MAX_BATCH_BYTES) {
    throw invalidArgument(`modifications hold ${bytes} bytes of keys and values; the maximum is ${MAX_BATCH_BYTES}`);
  }
}

/**
 * Rejects a batch naming one key twice. `ids` are the storage keys' latin1 forms (computed once for
 * the overlay anyway; all modifications of a batch share one family, so equal ids = equal keys).
 */
export function checkDuplicates(mods: readonly CheckedModification[], ids: readonly (string | undefined)[]): void {
  if (mods.length < 2) return;
  // One set insertion per key (this runs for every modification); the first index is looked up
  // only for the error.
  const seen = new Set<string>();
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i];
    if (id === undefined) continue;
    const size = seen.size;
    if (seen.add(id).size === size) {
      const first = ids.indexOf(id);
      throw invalidArgument(`modifications[${i}].key duplicates modifications[${first}].key; a batch may name a key once`, i);
    }
  }
}

/** Validates the modifications of an Update; throws an INVALID_ARGUMENT fault on the first problem. */
export function checkModifications(mods: unknown): CheckedModification[] {
  if (mods === undefined || mods === null) return [];
  if (!Array.isArray(mods)) throw invalidArgument('modifications must be a list');
  if (mods.length > MAX_BATCH_ITEMS) {
    throw invalidArgument(`modifications has ${mods.length} items; the maximum is ${MAX_BATCH_ITEMS}`);
  }
  const checked = new Array<CheckedModification>(mods.length);
  for (let i = 0; i < mods.length; i++) checked[i] = checkModification(mods[i] as ModificationInput, i);
  checkBatchShape(checked);
  return checked;
}
