/**
 * Finishes tables left CREATING or DELETING, or with replacement segments of a removed store not yet in
 * use — by a controller killed midway, or by stores that were unreachable when the request gave up.
 * Runs once at start, then every `intervalMs`, and soon after a store becomes live. Dead stores are
 * simply retried on later passes until they return (or are removed: see store-removal.ts).
 */
import type { Logger } from '../../server-kit/log';
import type { MetadataStore } from '../metadata/metadata-store';
import type { TableOperations } from './table-operations';

/** Periodic driver of {@link TableOperations.resume}. */
export class Resumer {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private stopped = false;

  constructor(
    private readonly meta: MetadataStore,
    private readonly ops: TableOperations,
    private readonly intervalMs: number,
    private readonly logger: Logger,
  ) {}

  /** Runs a first pass now and schedules the next ones. */
  start(): void {
    this.kick();
  }

  /** Runs a pass as soon as possible (coalesced with one already running). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.running = this.pass().finally(() => {
      this.running = undefined;
      if (this.again) {
        this.again = false;
        this.kick();
      } else this.schedule();
    });
  }

  /** Stops scheduling and waits for a running pass. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => this.kick(), this.intervalMs);
    this.timer.unref();
  }

  private async pass(): Promise<void> {
    const tables = this.meta.unfinishedTables();
    if (tables.length > 0) this.logger.debug('resuming tables', { count: tables.length });
    for (const t of tables) {
      if (this.stopped) return;
      try {
        await this.ops.resume(t.scope, t.table);
      } catch (err) {
        this.logger.error('resuming a table failed', { scope: t.scope, table: t.table, err });
      }
    }
  }
}
