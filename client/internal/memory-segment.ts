/**
 * One table segment of the in-memory table: its families' sorted entries and its sequence. It keeps
 * the segment store's semantics (segmentstore/storage/update-stager.ts): a batch's conditions are
 * checked against the state before it, the first failing one is refused with the store's code and
 * message, then the modifications are applied in order; every PUT and INSERT takes the segment's
 * next sequence; expired entries are absent. Scans walk families in the store's storage order
 * (shorter family names first, then bytewise; family-less keys last).
 */
import { ErrorCodes } from '../../proto/error-codes';
import type { WireError } from '../../proto/messages';
import type { Version } from '../version';
import type { ModificationSink } from './abstract-key-value-table';
import type { KeyBounds } from '../../proto/key-bounds';
import { EntryPage, MemoryEntry, SortedEntries } from './memory-entries';
import { MODIFICATION_TYPES } from '../../proto/enums';
import { NO_TTL } from './update-encoder';

const EMPTY = Buffer.alloc(0);

/** One checked modification, its key and value copied (the caller may reuse its buffers). */
export interface MemoryModification {
  /** A {@link MODIFICATION_TYPES} number. */
  type: number;
  key: Buffer;
  value: Buffer;
  condition: Version | undefined;
  /** 0 = never expires. */
  ttlMs: number;
  /** The bounds of a REMOVE_RANGE. */
  range?: KeyBounds;
}

/** A batch of the in-memory table: the modifications as the table's checks pass them on. */
export class MemoryBatch implements ModificationSink {
  readonly mods: MemoryModification[] = [];
  dataBytes = 0;

  add(type: number, key: Uint8Array, value: Uint8Array, condition: Version | undefined, ttlMs: string): void {
    this.mods.push({ type, key: Buffer.from(key), value: Buffer.from(value), condition, ttlMs: ttlMs === NO_TTL ? 0 : Number(ttlMs) });
    this.dataBytes += key.length + value.length;
  }

  addRange(from: Uint8Array, to: Uint8Array, prefix: Uint8Array): void {
    const range = { from: Buffer.from(from), to: Buffer.from(to), prefix: Buffer.from(prefix), toInclusive: false, reverse: false };
    this.mods.push({ type: MODIFICATION_TYPES.REMOVE_RANGE, key: EMPTY, value: EMPTY, condition: undefined, ttlMs: 0, range });
  }
}

/** An item of a scan page: an entry and its family ("" for none). */
export interface ScanItem {
  family: string;
  entry: MemoryEntry;
}

/** Where a scan continues: strictly after this key of this family. */
export interface ScanPosition {
  family: string;
  key: Buffer;
}

/** Storage order of families: by UTF-8 length, then bytewise; the family-less keys ("") last. */
function familyOrder(a: string, b: string): number {
  if (a === b) return 0;
  if (a === '') return 1;
  if (b === '') return -1;
  const [x, y] = [Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8')];
  return x.length !== y.length ? x.length - y.length : Buffer.compare(x, y);
}

/** Sequences beyond 2^53 read as the store reads them (it keeps sequences as numbers). */
function shownSequence(sequence: string): string {
  return Number.isSafeInteger(Number(sequence)) ? String(Number(sequence)) : 'beyond 2^53';
}

/** The entries and sequence of one segment. */
export class MemorySegment {
  private lastSequence = 0;
  /** Entries by family ("" = family-less); a family whose last entry goes is dropped. */
  private readonly families = new Map<string, SortedEntries>();

  constructor(readonly id: string) {}

  /** The live entry of `key` in `family` at `now`, or undefined. */
  get(family: string, key: Buffer, now: number): MemoryEntry | undefined {
    return this.families.get(family)?.get(key, now);
  }

  /** The first condition of `mods` that fails at `now`, as the store words it; undefined when all hold. */
  check(family: string, mods: readonly MemoryModification[], now: number): WireError | undefined {
    const entries = this.families.get(family);
    for (let i = 0; i < mods.length; i++) {
      const m = mods[i];
      const c = m.condition;
      const unconditional = c === undefined || c.isNoVersion;
      if (m.type === MODIFICATION_TYPES.REMOVE_RANGE || (unconditional && m.type !== MODIFICATION_TYPES.INSERT)) continue;
      const current = entries?.get(m.key, now)?.sequence;
      if (m.type === MODIFICATION_TYPES.INSERT || c!.isNotExists) {
        if (current !== undefined) return this.failure(ErrorCodes.BAD_KEY_VERSION, `modifications[${i}]: the key already exists in segment ${this.id}`, i);
        continue;
      }
      if (current === undefined) return this.failure(ErrorCodes.NO_SUCH_KEY, `modifications[${i}]: the key does not exist in segment ${this.id}`, i);
      if (c!.segmentId !== this.id || c!.sequence !== String(current)) {
        const wanted = `${c!.segmentId}.${shownSequence(c!.sequence)}`;
        return this.failure(ErrorCodes.BAD_KEY_VERSION, `modifications[${i}]: the key's version is ${this.id}.${current}, not ${wanted}`, i);
      }
    }
    return undefined;
  }

  /** Applies checked `mods` in order; returns the sequence each PUT and INSERT took (0 for removals). */
  apply(family: string, mods: readonly MemoryModification[], now: number): number[] {
    const entries = this.families.get(family) ?? new SortedEntries();
    const sequences = mods.map((m) => {
      if (m.type === MODIFICATION_TYPES.REMOVE_RANGE) entries.deleteWhere(m.range!);
      else if (m.type === MODIFICATION_TYPES.REMOVE) entries.delete(m.key);
      else {
        const sequence = ++this.lastSequence;
        entries.set({ key: m.key, value: m.value, sequence, expiresAt: m.ttlMs > 0 ? now + m.ttlMs : 0 });
        return sequence;
      }
      return 0;
    });
    if (entries.size > 0) this.families.set(family, entries);
    else this.families.delete(family);
    return sequences;
  }

  /** One iterator page of `family` within `bounds` (see SortedEntries.page). */
  page(family: string, bounds: KeyBounds, maxItems: number, now: number, bytesOf: (e: MemoryEntry) => number): EntryPage {
    const entries = this.families.get(family);
    return entries ? entries.page(bounds, maxItems, now, bytesOf) : { entries: [], done: true };
  }

  /**
   * One scan page strictly after `after` (from the start when undefined): at most `maxItems` live
   * entries whose family + key + value bytes stay within the page cap `pageBytes` (the first always
   * goes), and whether nothing follows.
   */
  scanPage(after: ScanPosition | undefined, maxItems: number, now: number, pageBytes: number): { items: ScanItem[]; done: boolean } {
    const items: ScanItem[] = [];
    let bytes = 0;
    const families = [...this.families.keys()].sort(familyOrder);
    for (const family of families) {
      const order = after ? familyOrder(family, after.family) : 1;
      if (order < 0) continue;
      const familyBytes = Buffer.byteLength(family, 'utf8');
      for (const entry of this.families.get(family)!.liveAfter(order === 0 ? after!.key : undefined, now)) {
        const size = familyBytes + entry.key.length + entry.value.length;
        if (items.length >= maxItems || (items.length > 0 && bytes + size > pageBytes)) return { items, done: false };
        items.push({ family, entry });
        bytes += size;
      }
    }
    return { items, done: true };
  }

  private failure(code: string, message: string, index: number): WireError {
    return { code, message, index, segmentId: this.id };
  }
}
