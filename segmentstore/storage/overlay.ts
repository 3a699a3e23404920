/**
 * The in-memory overlay of writes that are staged but possibly not yet visible to a LevelDB read.
 *
 * Why: a conditional check, a range removal and a point read must see every update staged before
 * them, including ones still waiting in the group commit or, durable in the log, for their apply to
 * LevelDB. They read the overlay first and LevelDB second. LevelDB reads are snapshots taken when the
 * read starts, so an overlay entry may only leave the overlay once LevelDB holds it AND every read
 * that started before that apply has finished: otherwise a read could miss a write both in its
 * snapshot and in the overlay. Reads register an
 * epoch with {@link Overlay.beginRead}; flushed entries are retired with the flush epoch and dropped
 * when no older read remains. Check-and-stage is synchronous after the read, so two racing
 * conditional updates cannot both pass: the second sees the first in the overlay.
 */

/** One staged write of one storage key. */
export interface OverlayEntry {
  /** The batch that writes it (its `durable` tells whether a reader may see it yet); none = durable. */
  readonly batch?: { readonly durable: boolean; readonly done: Promise<void> };
  /** `storageKey.toString('latin1')`: the map key. */
  readonly id: string;
  readonly storageKey: Buffer;
  /** Sequence of the write; 0 for a removal. */
  readonly sequence: number;
  /** Expiry in ms since the epoch; 0 = never. */
  readonly expiresAt: number;
  /** The value bytes, or null for a removal (tombstone). */
  readonly value: Buffer | null;
}

interface Retired {
  epoch: number;
  entries: OverlayEntry[];
}

/** Staged writes by storage key, with read-epoch retention (see the module comment). */
export class Overlay {
  private readonly entries = new Map<string, OverlayEntry>();
  private epoch = 0;
  /** start epoch → number of reads in flight; insertion order = ascending epochs. */
  private readonly readers = new Map<number, number>();
  private retired: Retired[] = [];

  get size(): number {
    return this.entries.size;
  }

  /** The newest staged write of `id`, if any. */
  get(id: string): OverlayEntry | undefined {
    return this.entries.get(id);
  }

  /** Records a staged write; it shadows LevelDB until retired. */
  set(entry: OverlayEntry): void {
    this.entries.set(entry.id, entry);
  }

  /** Every entry whose id starts with `prefix` (latin1 form of a storage-key prefix). */
  *withPrefix(prefix: string): IterableIterator<OverlayEntry> {
    for (const [id, entry] of this.entries) if (id.startsWith(prefix)) yield entry;
  }

  /** Registers a LevelDB read about to start; pass the token to {@link endRead}. */
  beginRead(): number {
    const epoch = this.epoch;
    this.readers.set(epoch, (this.readers.get(epoch) ?? 0) + 1);
    return epoch;
  }

  /** Ends a read registered by {@link beginRead}; may release retired entries. */
  endRead(token: number): void {
    const n = (this.readers.get(token) ?? 1) - 1;
    if (n > 0) this.readers.set(token, n);
    else this.readers.delete(token);
    this.release();
  }

  /** LevelDB holds the entries of a batch: retire them. */
  committed(entries: readonly OverlayEntry[]): void {
    this.epoch++;
    if (this.readers.size === 0 && this.retired.length === 0) {
      this.drop(entries);
      return;
    }
    this.retired.push({ epoch: this.epoch, entries: entries as OverlayEntry[] });
    this.release();
  }

  /** The batch holding these entries failed: forget them (newer writes of the same keys stay). */
  rolledBack(entries: readonly OverlayEntry[]): void {
    this.drop(entries);
  }

  private drop(entries: readonly OverlayEntry[]): void {
    for (let i = 0; i < entries.length; i++) {
      const e = entries[i];
      if (this.entries.get(e.id) === e) this.entries.delete(e.id);
    }
  }

  private release(): void {
    let oldestRead = Infinity;
    for (const epoch of this.readers.keys()) {
      oldestRead = epoch;
      break;
    }
    let n = 0;
    while (n < this.retired.length && this.retired[n].epoch <= oldestRead) {
      this.drop(this.retired[n].entries);
      n++;
    }
    if (n > 0) this.retired = this.retired.slice(n);
  }
}
