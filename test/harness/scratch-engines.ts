/**
 * Segment engines over fresh temp directories for unit tests: each engine is closed and each
 * directory removed after the test that made it (last made, first undone), whatever the test did.
 */
import * as path from 'node:path';
import { afterEach } from 'vitest';
import { SegmentEngine } from '../../segmentstore/storage/segment-engine';
import type { SegmentEngineOptions } from '../../segmentstore/storage/segments/segment-state';
import { tempDir } from './process';

/** What {@link scratchEngines} gives a test file (or a describe block). */
export interface ScratchEngines {
  /** The path of a database in a fresh temp directory (removed after the test); nothing is opened. */
  location(): string;
  /** Opens an engine at `where` (a fresh location by default) with the defaults and `options`; closed after the test. */
  open(where?: string, options?: SegmentEngineOptions): Promise<SegmentEngine>;
  /** Runs `undo` after the test, before whatever was deferred earlier. */
  defer(undo: () => Promise<void> | void): void;
}

/**
 * Registers an `afterEach` in the calling file or describe block that undoes what its tests made.
 * `defaults` apply to every open (the sweeper off unless a test turns it on).
 */
export function scratchEngines(prefix = 'kvt-engine-', defaults: SegmentEngineOptions = { expirySweepIntervalMs: 0 }): ScratchEngines {
  const undo: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const fn of undo.splice(0).reverse()) await fn();
  });
  const location = (): string => {
    const dir = tempDir(prefix);
    undo.push(dir.dispose);
    return path.join(dir.path, 'db');
  };
  return {
    location,
    async open(where = location(), options = {}) {
      const engine = await SegmentEngine.open(where, { ...defaults, ...options });
      undo.push(() => engine.close());
      return engine;
    },
    defer: (fn) => void undo.push(fn),
  };
}
