/**
 * Background removal of expired entries. Reads are already blind to expired entries (by the
 * store's clock); the sweeper only reclaims their space. It walks the expiry index in bounded
 * batches and removes an entry only if it still carries the expiry the index names and no newer
 * write of it is staged, through the same group commit as every other write. Each sweep also keeps
 * how far the store's clock has gone (StoreClock), so that it never goes back across a restart.
 */
import type { ClassicLevel } from 'classic-level';
import type { CommitBatch } from '../log/commit-batch';
import type { GroupCommitter } from '../log/group-commit';
import { isChunkKey } from '../chunks/family-store';
import { decodeExpiryKey, expiryBound, familyOf, NS_EXPIRY, userKeyOf, valueExpiresAt } from '../key-codec';
import { Overlay } from '../overlay';
import type { StoreClock } from './store-clock';

const EXPIRY_START = Buffer.from([NS_EXPIRY]);

/** One entry of the expiry index, decoded. */
type ExpiryIndexEntry = ReturnType<typeof decodeExpiryKey>;

/** Removes expired entries every `intervalMs`, `batchSize` at a time. */
export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;
  private stopped = false;

  constructor(
    private readonly db: ClassicLevel<Buffer, Buffer>,
    private readonly overlay: Overlay,
    private readonly committer: GroupCommitter,
    private readonly clock: StoreClock,
    private readonly batchSize: number,
    private readonly onError: (err: unknown) => void,
    private readonly expireInFamily: (segmentId: string, family: string, items: { key: Buffer; expiresAt: number }[]) => Promise<number>,
  ) {}

  /** Starts sweeping every `intervalMs` (0 = never). */
  start(intervalMs: number): void {
    if (intervalMs <= 0 || this.timer) return;
    this.timer = setInterval(() => {
      if (!this.running) void this.sweep().catch(this.onError);
    }, intervalMs);
    this.timer.unref();
  }

  /** Stops the timer and waits for a sweep in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }

  /** Runs sweep batches until nothing due remains (at most `maxBatches`); resolves entries removed. */
  sweep(maxBatches = 10): Promise<number> {
    if (this.running) return this.running;
    this.running = this.run(maxBatches).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async run(maxBatches: number): Promise<number> {
    let removed = 0;
    for (let i = 0; i < maxBatches && !this.stopped; i++) {
      const { removed: n, more } = await this.sweepBatch();
      removed += n;
      if (!more) break;
    }
    if (!this.stopped) await this.clock.save(this.db, false);
    return removed;
  }

  /** One batch: the due index entries (up to `batchSize`), their entries removed where still due. */
  private async sweepBatch(): Promise<{ removed: number; more: boolean }> {
    const now = this.clock.now();
    const token = this.overlay.beginRead();
    let removed = 0;
    let indexKeys: Buffer[] = [];
    try {
      indexKeys = await this.db.keys({ gte: EXPIRY_START, lt: expiryBound(now), limit: this.batchSize, keyEncoding: 'buffer' }).all();
      if (indexKeys.length === 0) return { removed: 0, more: false };
      const parsed = indexKeys.map(decodeExpiryKey);
      const { families, plain } = sortByFamily(parsed);
      for (const g of families.values()) removed += await this.expireInFamily(g.segmentId, g.family, g.items);
      const stored = await this.db.getMany(plain.map((i) => parsed[i].storageKey));
      const batch = this.committer.batch();
      removed += this.removePlain(batch, parsed, plain, stored);
      // Index entries go once handled (a family entry rewritten meanwhile has its own, newer one).
      for (let i = 0; i < parsed.length; i++) {
        if (isChunkKey(parsed[i].storageKey) || !this.overlay.get(parsed[i].storageKey.toString('latin1'))) batch.del(indexKeys[i]);
      }
      this.committer.staged();
      await batch.done;
    } finally {
      this.overlay.endRead(token);
    }
    return { removed, more: indexKeys.length === this.batchSize };
  }

  /**
   * Stages into `batch` the removal of the family-less entries `plain` (indices into `parsed`) whose
   * record as read (`stored`, same order) still carries the indexed expiry; returns how many.
   */
  private removePlain(batch: CommitBatch, parsed: readonly ExpiryIndexEntry[], plain: readonly number[], stored: readonly (Buffer | undefined)[]): number {
    let removed = 0;
    for (let j = 0; j < plain.length; j++) {
      const { expiresAt, storageKey } = parsed[plain[j]];
      // A staged write of this key is newer than what we read: leave it for a later round.
      if (this.overlay.get(storageKey.toString('latin1'))) continue;
      const value = stored[j];
      if (value && valueExpiresAt(value) === expiresAt) {
        batch.del(Buffer.from(storageKey));
        removed++;
      }
    }
    return removed;
  }
}

/** The due entries of one keyed family, for {@link ExpirySweeper}'s `expireInFamily`. */
interface FamilyExpiry {
  segmentId: string;
  family: string;
  items: { key: Buffer; expiresAt: number }[];
}

/** Sorts index entries into keyed families (by segment and family) and family-less ones (`plain`: their indices). */
function sortByFamily(parsed: readonly ExpiryIndexEntry[]): { families: Map<string, FamilyExpiry>; plain: number[] } {
  const families = new Map<string, FamilyExpiry>();
  const plain: number[] = [];
  for (let i = 0; i < parsed.length; i++) {
    const { expiresAt, storageKey } = parsed[i];
    if (!isChunkKey(storageKey)) {
      plain.push(i);
      continue;
    }
    const family = familyOf(storageKey);
    const segmentId = storageKey.readBigUInt64BE(1).toString();
    const group = `${segmentId}/${family}`;
    let g = families.get(group);
    if (!g) families.set(group, (g = { segmentId, family, items: [] }));
    g.items.push({ key: Buffer.from(userKeyOf(storageKey)), expiresAt });
  }
  return { families, plain };
}
