/** What every route of the endpoint shares: the databases, the settings, and the waits under way. */
import { TableNotFoundError } from '../client';
import type { Database, DatabaseCatalog } from './catalog';
import { noDatabase } from './errors';

/** The shared state of one endpoint. */
export class CouchContext {
  /** The longpoll waits under way: aborted when the endpoint stops, so that they answer at once. */
  readonly waits = new Set<AbortController>();

  constructor(
    readonly catalog: DatabaseCatalog,
    /** Partitions of a database created without `?q=`. */
    readonly defaultPartitions: number,
    /** The server's uuid (`GET /`): stable for a scope, so replication ids survive restarts. */
    readonly uuid: string,
  ) {}

  /**
   * Runs `fn` on database `name`. A table found gone midway (deleted by someone else) is forgotten
   * and answered as the missing database it is.
   */
  async withDatabase<T>(name: string, fn: (db: Database) => Promise<T>): Promise<T> {
    const db = await this.catalog.open(name);
    try {
      return await fn(db);
    } catch (err) {
      if (!(err instanceof TableNotFoundError)) throw err;
      await this.catalog.forget(name);
      throw noDatabase(name);
    }
  }

  /** An abort signal for a wait, aborted by {@link abortWaits} or by `abort` (the caller hung up); `done` forgets it. */
  startWait(): { signal: AbortSignal; abort(): void; done(): void } {
    const controller = new AbortController();
    this.waits.add(controller);
    return { signal: controller.signal, abort: () => controller.abort(), done: () => this.waits.delete(controller) };
  }

  /** Ends every wait under way (the endpoint is stopping). */
  abortWaits(): void {
    for (const w of this.waits) w.abort();
    this.waits.clear();
  }
}
