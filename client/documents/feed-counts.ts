/**
 * The document counts of a feed family (what `info` answers), kept as the changes are indexed instead
 * of counted from every change entry at each call: CouchDB reads `doc_count` off its b-tree's
 * reductions, and PouchDB asks for it at the start of every replication.
 *
 * - Every index update that moves a document's change entry also writes, in the same atomic update, a
 *   **delta** `0x05·token` (+/− live documents, +/− deleted documents) unless it sums to zero (an edit
 *   of a live document that stays live). Its id entry now says whether the document's winner was
 *   deleted, so the next change of it knows what it leaves; an 8-byte id entry (written before counts
 *   were kept) is a document no delta has counted yet, and its next change counts it as new.
 * - The **summary** `0x05` holds the deltas folded so far. A fold is one atomic update conditioned
 *   on the summary's version: the new totals, and the removal of each delta they took in. Deltas
 *   are never changed, only removed by the fold that took them, so a count is the summary plus the
 *   deltas present, read while the summary's version stayed the same.
 * - A feed family without a summary gets one (at zero: every delta counts) once no id entry of it
 *   is an 8-byte one; until then its documents are counted from the change entries, as before.
 *   (A writer of a build from before counts were kept, still writing to the table, is not supported.)
 */
import { randomBytes } from 'node:crypto';
import { ConditionalTableUpdateError, ServiceError } from '../errors';
import { MAX_BATCH_ITEMS } from '../limits';
import type { TableModification } from '../types';
import type { Version } from '../version';
import type { BytesTable } from './document-reads';
import { decodeChange } from './feed-records';
import { CHANGE_PREFIX, COUNT_PREFIX, COUNT_TOKEN_BYTES, ID_PREFIX } from './key-layout';

/** Live and deleted documents (a total, or a change of them). */
export interface DocumentCounts {
  documents: number;
  deletedDocuments: number;
}

/** What an id entry says of its document: its change entry's seq, and, if counted, whether its winner is deleted. */
export interface IdState {
  seq: bigint;
  /** Null for an 8-byte id entry: a document no delta has counted yet. */
  deleted: boolean | null;
}

/** Deltas a count reads before it folds them into the summary. */
export const FOLD_AT = 64;
/** Reads of the summary and deltas before a count gives up (each retry: a fold ran meanwhile). */
const COUNT_ATTEMPTS = 8;
/** Entries read at once by a count. */
const PAGE_ITEMS = 1024;

const ZERO: DocumentCounts = { documents: 0, deletedDocuments: 0 };

/** An id entry's value: seq (8, BE) · deleted (1: 0 or 1). */
export function encodeIdEntry(seq: bigint, deleted: boolean): Buffer {
  const out = Buffer.allocUnsafe(9);
  out.writeBigUInt64BE(seq);
  out[8] = deleted ? 1 : 0;
  return out;
}

/** Decodes an id entry (8 bytes: written before counts were kept). @throws ServiceError for anything else. */
export function decodeIdEntry(bytes: Uint8Array): IdState {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length !== 8 && b.length !== 9) throw new ServiceError(`a changes feed id entry is ${b.length} bytes; expected 8 or 9`, { code: 'SERVICE_ERROR' });
  if (b.length === 9 && b[8] > 1) throw new ServiceError(`a changes feed id entry's deleted flag is ${b[8]}; expected 0 or 1`, { code: 'SERVICE_ERROR' });
  return { seq: b.readBigUInt64BE(0), deleted: b.length === 8 ? null : b[8] === 1 };
}

/** What a document's change does to the counts: it leaves `before` (null: not counted) for `deleted`. */
export function countChange(before: boolean | null, deleted: boolean): DocumentCounts {
  const was = before === null ? ZERO : before ? { documents: 0, deletedDocuments: 1 } : { documents: 1, deletedDocuments: 0 };
  return { documents: (deleted ? 0 : 1) - was.documents, deletedDocuments: (deleted ? 1 : 0) - was.deletedDocuments };
}

/** The sum of `a` and `b`. */
export function addCounts(a: DocumentCounts, b: DocumentCounts): DocumentCounts {
  return { documents: a.documents + b.documents, deletedDocuments: a.deletedDocuments + b.deletedDocuments };
}

/** The put of a delta record, or none when `delta` is zero. */
export function deltaModification(delta: DocumentCounts): TableModification<Uint8Array, Uint8Array>[] {
  if (delta.documents === 0 && delta.deletedDocuments === 0) return [];
  return [{ type: 'put', key: Buffer.concat([COUNT_PREFIX, randomBytes(COUNT_TOKEN_BYTES)]), value: encodeCounts(delta) }];
}

function encodeCounts(c: DocumentCounts): Buffer {
  const out = Buffer.allocUnsafe(16);
  out.writeBigInt64BE(BigInt(c.documents));
  out.writeBigInt64BE(BigInt(c.deletedDocuments), 8);
  return out;
}

function decodeCounts(bytes: Uint8Array): DocumentCounts {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length !== 16) throw new ServiceError(`a document count record is ${b.length} bytes; expected 16`, { code: 'SERVICE_ERROR' });
  return { documents: Number(b.readBigInt64BE(0)), deletedDocuments: Number(b.readBigInt64BE(8)) };
}

/** The summary and deltas of a feed family, read together. */
interface CountRecords {
  summary: { counts: DocumentCounts; version: Version } | null;
  deltas: { key: Uint8Array; counts: DocumentCounts }[];
}

/** Reads (and folds) the counts of feed families. */
export class FeedCounts {
  constructor(private readonly table: BytesTable) {}

  /** The documents of feed family `family`: from its summary and deltas, folding them when many; else counted from its change entries. */
  async count(family: string): Promise<DocumentCounts> {
    let records = await this.read(family);
    if (records.summary === null) {
      if (await this.hasUncounted(family)) return this.countChanges(family);
      await this.table.putIfAbsent(family, COUNT_PREFIX, encodeCounts(ZERO)).catch(ignoreConditional);
      // Read again: whoever wrote the summary may have folded deltas into it since.
      records = await this.read(family);
      if (records.summary === null) throw new ServiceError(`the document count of feed family ${family} was removed while being read`, { code: 'SERVICE_ERROR' });
    }
    if (records.deltas.length >= FOLD_AT) await this.foldRecords(family, records);
    return records.deltas.reduce((sum, d) => addCounts(sum, d.counts), records.summary.counts);
  }

  /** Folds the deltas of feed family `family` into its summary, if it has one (best effort). */
  async fold(family: string): Promise<void> {
    const records = await this.read(family);
    if (records.summary !== null && records.deltas.length > 0) await this.foldRecords(family, records);
  }

  private async foldRecords(family: string, records: CountRecords): Promise<void> {
    let { counts, version } = records.summary!;
    const per = MAX_BATCH_ITEMS - 1;
    for (let i = 0; i < records.deltas.length; i += per) {
      const slice = records.deltas.slice(i, i + per);
      counts = slice.reduce((sum, d) => addCounts(sum, d.counts), counts);
      const mods: TableModification<Uint8Array, Uint8Array>[] = [
        { type: 'put', key: COUNT_PREFIX, value: encodeCounts(counts), version },
        ...slice.map((d) => ({ type: 'remove' as const, key: d.key })),
      ];
      try {
        const [written] = await this.table.update(family, mods);
        version = written!;
      } catch (err) {
        // Another fold went first: what it took in is folded, and the rest waits for the next fold.
        ignoreConditional(err);
        return;
      }
    }
  }

  /** The summary and every delta, read while no fold changed the summary. */
  private async read(family: string): Promise<CountRecords> {
    for (let attempt = 1; ; attempt++) {
      const records: CountRecords = { summary: null, deltas: [] };
      for await (const page of this.table.entryIterator(family, { prefix: COUNT_PREFIX, maxKeysAtOnce: PAGE_ITEMS })) {
        for (const e of page.items) {
          if (e.key.length === COUNT_PREFIX.length) records.summary = { counts: decodeCounts(e.value), version: e.version };
          else records.deltas.push({ key: e.key, counts: decodeCounts(e.value) });
        }
      }
      // A fold changes the summary's version: one that ran during the read may have removed deltas the
      // read had not reached yet, which the summary read before it did not hold.
      const after = await this.table.get(family, COUNT_PREFIX);
      if ((after?.version.toString() ?? null) === (records.summary?.version.toString() ?? null)) return records;
      if (attempt >= COUNT_ATTEMPTS) throw new ServiceError(`the document count of feed family ${family} was folded under each of ${COUNT_ATTEMPTS} reads`, { code: 'SERVICE_ERROR' });
    }
  }

  /** Whether some id entry of the family was written before counts were kept (8 bytes). */
  private async hasUncounted(family: string): Promise<boolean> {
    for await (const page of this.table.entryIterator(family, { prefix: ID_PREFIX, maxKeysAtOnce: PAGE_ITEMS })) {
      if (page.items.some((e) => decodeIdEntry(e.value).deleted === null)) return true;
    }
    return false;
  }

  /** Counts the family's change entries, one per document (the count of a family with uncounted documents). */
  private async countChanges(family: string): Promise<DocumentCounts> {
    let documents = 0;
    let deletedDocuments = 0;
    for await (const page of this.table.entryIterator(family, { prefix: CHANGE_PREFIX, maxKeysAtOnce: PAGE_ITEMS })) {
      for (const e of page.items) {
        if (decodeChange(e.value).deleted) deletedDocuments++;
        else documents++;
      }
    }
    return { documents, deletedDocuments };
  }
}

/** Rethrows `err` unless it is a failed condition (a write another writer got in first). */
export function ignoreConditional(err: unknown): void {
  if (!(err instanceof ConditionalTableUpdateError)) throw err;
}
