/**
 * Reads renders out of a page's family: a record found by an iterator page or a get, and, for a large
 * render, the chunks it names (one getAll). A record and its chunks are written in one atomic update
 * and removed in one, so a record whose chunks are missing was replaced or culled between the two
 * reads: the read starts over (a few times), and never returns part of a render.
 */
import { ServiceError } from '../errors';
import type { KeyValueTable } from '../key-value-table';
import type { IteratorOptions } from '../types';
import { chunkKey, KIND, readPosition } from './key-layout';
import { bodiesOf, chunkLength, decodeRecord } from './render-codec';
import type { Render } from './types';

type Table = KeyValueTable<Uint8Array, Uint8Array>;

/** A key and value as reads return them. */
export interface RawEntry {
  key: Uint8Array;
  value: Uint8Array;
}

/** Reads that found a record whose chunks were gone start over this many times at most. */
const READ_ATTEMPTS = 4;

/** Thrown by {@link RenderReader.decode} when a record's chunks changed under the read. */
class StaleRecord extends Error {}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** Decodes records into renders, fetching chunks; `now` decides whether a historical record has expired. */
export class RenderReader {
  constructor(
    private readonly table: Table,
    private readonly clock: () => number,
  ) {}

  /** The items of the first page of an entry iteration. */
  async firstPage(title: string, options: IteratorOptions<Uint8Array>): Promise<RawEntry[]> {
    for await (const page of this.table.entryIterator(title, options)) return page.items;
    return [];
  }

  /**
   * Runs `find` (which reads records and decodes them) again while a record's chunks are found
   * missing; the render, or null.
   */
  async read(title: string, find: () => Promise<Render | null>): Promise<Render | null> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await find();
      } catch (err) {
        if (!(err instanceof StaleRecord)) throw err;
        if (attempt >= READ_ATTEMPTS) throw new ServiceError(`a render of page ${JSON.stringify(title)} changed under ${READ_ATTEMPTS} reads in a row: ${err.message}`, { code: 'SERVICE_ERROR' });
      }
    }
  }

  /**
   * The render of a record entry (kind RENDER or HISTORICAL), or null for an expired historical one;
   * with `asBytes`, its bodies as bytes (see ReadRenderOptions.bytes).
   * @throws StaleRecord (caught by {@link read}) when its chunks are missing.
   */
  async decode(title: string, entry: RawEntry, asBytes = false): Promise<Render | null> {
    const key = asBuffer(entry.key);
    const value = asBuffer(entry.value);
    const header = decodeRecord(value);
    if (header.expiresAt !== 0 && header.expiresAt <= this.clock()) return null;
    const { rev, tid } = readPosition(key, 1);
    let bodies;
    if (header.upload === null) {
      bodies = bodiesOf(header, value, header.bodyOffset, asBytes);
    } else {
      const chunkKind = key[0] === KIND.HISTORICAL ? KIND.HISTORICAL_CHUNK : KIND.CHUNK;
      const position = key.subarray(1);
      const keys = Array.from({ length: header.chunkCount }, (_, i) => chunkKey(chunkKind, position, header.upload!, i));
      const chunks = await this.table.getAll(title, keys);
      const parts = chunks.map((c, i) => {
        if (c === null || c.value.length !== chunkLength(header, i)) throw new StaleRecord(`chunk ${i} of render ${tid} of revision ${rev} is ${c === null ? 'missing' : `${c.value.length} bytes`}`);
        return asBuffer(c.value);
      });
      bodies = bodiesOf(header, Buffer.concat(parts, header.bodyBytes), 0, asBytes);
    }
    return { title, rev, tid, value: bodies.value, headers: header.headers, parts: bodies.parts };
  }

  /** The first record of `entries` that decodes to a live render (historical ones may have expired). */
  async firstLive(title: string, entries: RawEntry[], asBytes = false): Promise<Render | null> {
    for (const entry of entries) {
      const render = await this.decode(title, entry, asBytes);
      if (render) return render;
    }
    return null;
  }
}
