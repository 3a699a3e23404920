/**
 * The hot table's way into the archive tier (DESIGN §4, issue 32): what a cull is about to remove
 * from a page's family is appended to the archive first, and removed only once the archive has
 * acknowledged it; a cull whose renders the archive did not take is skipped (culling is best-effort,
 * so the renders stay hot until a later write culls them). A page's whole history can also be moved
 * on demand: every render but the latest goes to the archive and leaves the hot table.
 *
 * Only hot renders (kind RENDER) are archived: historical ones were made by the `render` callback
 * and expire by their TTL.
 */
import type { ArchiveStore } from '../archive';
import { ConditionalTableUpdateError } from '../errors';
import type { KeyValueTable } from '../key-value-table';
import type { TableEntry, TableModification } from '../types';
import { keyOf, KIND, lateKey } from './key-layout';
import { RawEntry, RenderReader } from './render-reader';
import type { Render } from './types';

type Table = KeyValueTable<Uint8Array, Uint8Array>;
type Modification = TableModification<Uint8Array, Uint8Array>;

/** Renders appended to the archive per call, and read from the hot table per iterator page. */
const ARCHIVE_BATCH = 32;

/** What {@link Archiver.moveHistory} did. */
export interface MovedHistory {
  /** Renders appended to the archive (or found there already) and removed from the hot table. */
  moved: number;
  /** Renders left hot because they changed while they were being moved (a later move takes them). */
  skipped: number;
}

/** A render read from the archive, as the store returns renders (bytes as a Buffer). */
export function fromArchive(r: { title: string; rev: number; tid: string; value: string | Uint8Array; headers: Record<string, string>; parts: Record<string, string | Uint8Array> }): Render {
  const body = (b: string | Uint8Array): string | Buffer => (typeof b === 'string' ? b : Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
  return { title: r.title, rev: r.rev, tid: r.tid, value: body(r.value), headers: r.headers, parts: Object.fromEntries(Object.entries(r.parts).map(([k, v]) => [k, body(v)])) };
}

/** Moves renders from a page's family into an archive. */
export class Archiver {
  constructor(
    private readonly table: Table,
    private readonly reader: RenderReader,
    readonly archive: ArchiveStore,
  ) {}

  /**
   * Appends to the archive every hot render that `culls` (a cull's modifications) would remove.
   * Resolves false when that failed: the caller then writes without the cull.
   */
  async archiveCulled(title: string, culls: Modification[]): Promise<boolean> {
    try {
      let batch: Render[] = [];
      for (const mod of culls) {
        for await (const entry of this.renderEntriesOf(title, mod)) {
          const render = await this.reader.read(title, () => this.reader.decode(title, entry));
          if (render) batch.push(render);
          if (batch.length >= ARCHIVE_BATCH) {
            await this.archive.append(batch);
            batch = [];
          }
        }
      }
      if (batch.length > 0) await this.archive.append(batch);
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Moves every render of `title` but its latest to the archive: appended first, then removed from
   * the hot table, each on condition that it is still the render that was archived.
   */
  async moveHistory(title: string): Promise<MovedHistory> {
    const result: MovedHistory = { moved: 0, skipped: 0 };
    let first = true;
    for await (const page of this.table.entryIterator(title, { prefix: Buffer.of(KIND.RENDER), maxKeysAtOnce: ARCHIVE_BATCH })) {
      const entries: TableEntry<Uint8Array, Uint8Array>[] = first ? page.items.slice(1) : page.items; // the latest stays hot
      first = false;
      if (entries.length === 0) continue;
      const renders: Render[] = [];
      const kept: TableEntry<Uint8Array, Uint8Array>[] = [];
      for (const entry of entries) {
        const render = await this.reader.read(title, () => this.reader.decode(title, entry));
        if (render) {
          renders.push(render);
          kept.push(entry);
        }
      }
      await this.archive.append(renders);
      const mods: Modification[] = kept.flatMap((e) => {
        const position = Buffer.from(e.key).subarray(1);
        return [
          { type: 'remove', key: e.key, version: e.version },
          { type: 'removeRange', prefix: keyOf(KIND.CHUNK, position) },
          { type: 'remove', key: lateKey(position) },
        ] satisfies Modification[];
      });
      try {
        await this.table.update(title, mods);
        result.moved += kept.length;
      } catch (err) {
        if (!(err instanceof ConditionalTableUpdateError)) throw err;
        result.skipped += kept.length; // rewritten meanwhile: archived as it was, left hot as it is
      }
    }
    return result;
  }

  /** The hot render entries a cull modification removes (none for chunk, timeline and late-write ones). */
  private async *renderEntriesOf(title: string, mod: Modification): AsyncGenerator<RawEntry> {
    if (mod.type === 'remove') {
      if (mod.key[0] !== KIND.RENDER) return;
      const entry = await this.table.get(title, mod.key);
      if (entry) yield entry;
      return;
    }
    if (mod.type !== 'removeRange' || mod.from === undefined || mod.from[0] !== KIND.RENDER) return;
    for await (const page of this.table.entryIterator(title, { from: mod.from, to: mod.to, maxKeysAtOnce: ARCHIVE_BATCH })) yield* page.items;
  }
}
