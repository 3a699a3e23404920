/**
 * A segment store process whose disk a test can stall (leveldb-fault-preload.cjs, KVT_TEST_HOLD_FILE):
 * while stalled, durable log writes and LevelDB batch writes wait, so updates wait for their group
 * commit as long as the test needs.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { expect } from 'vitest';
import { REPO_ROOT } from './process';

const PRELOAD = path.join(REPO_ROOT, 'test', 'harness', 'leveldb-fault-preload.cjs');
/** What leveldb-fault-preload.cjs writes beside the hold file: a write stalls; a durable log record stalls. */
const WAIT_MARKERS = ['.waiting', '.record-waiting'];

export class DiskStall {
  /** @param hold the hold file's path (in a test's temp dir). */
  constructor(readonly hold: string) {}

  /** The environment of a store process whose disk this stalls. */
  env(): NodeJS.ProcessEnv {
    return { NODE_OPTIONS: `--require ${PRELOAD}`, KVT_TEST_HOLD_FILE: this.hold };
  }

  /**
   * Stalls the disk and runs `start` (which starts an update), resolving once a durable log record
   * waits: the first update's flush. (A LevelDB apply of earlier writes stalls too and may come first;
   * waiting for any stalled write returned before the update reached the store one run in three or
   * four.) `running` is what `start` returned, its rejection handled so that a test that fails first
   * leaves none unhandled. Markers a released waiter wrote late are cleared first.
   */
  async stallWith<T>(start: () => Promise<T>): Promise<{ running: Promise<T> }> {
    this.clearMarkers();
    fs.writeFileSync(this.hold, '');
    const running = start();
    running.catch(() => undefined);
    for (let i = 0; i < 1_000 && !fs.existsSync(`${this.hold}.record-waiting`); i++) await new Promise((r) => setTimeout(r, 10));
    expect(fs.existsSync(`${this.hold}.record-waiting`), 'the store stalls writing the first update').toBe(true);
    return { running };
  }

  /** Lets the disk move again. */
  release(): void {
    fs.rmSync(this.hold, { force: true });
    this.clearMarkers();
  }

  private clearMarkers(): void {
    for (const marker of WAIT_MARKERS) fs.rmSync(`${this.hold}${marker}`, { force: true });
  }
}
