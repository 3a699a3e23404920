/**
 * Fault injection into storage writes. LevelDB cannot be made to fail on demand (a full disk or an
 * I/O error), so the next write of any ClassicLevel in this process is made to fail the way
 * classic-level reports one: its promise rejects and nothing of the batch is written. Likewise the
 * next write to a segment store's durable log (where a flush goes first).
 */
import * as fs from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import * as path from 'node:path';
import { ClassicLevel } from 'classic-level';
import { LOG_FILE } from '../../segmentstore/storage/log/durable-log';

type BatchFn = (...args: unknown[]) => unknown;

/**
 * Makes the next write of the given form reject with `message`: a chained `batch().write()` (the
 * segment store's) or a `batch(array)` (the controller's). Dispose (or call) to undo if it never ran.
 */
function failNextBatch(message: string, form: 'chained' | 'array'): Disposable & (() => void) {
  const proto = ClassicLevel.prototype as unknown as { batch: BatchFn };
  const original = proto.batch;
  const restore = () => {
    proto.batch = original;
  };
  proto.batch = function (this: ClassicLevel<Buffer, Buffer>, ...args: unknown[]) {
    const chained = args.length === 0;
    if (chained !== (form === 'chained')) return original.apply(this, args);
    restore();
    if (!chained) return Promise.reject(new Error(message));
    const chain = original.apply(this, args) as { write: () => Promise<void>; close: () => Promise<void> };
    chain.write = async () => {
      await chain.close();
      throw new Error(message);
    };
    return chain;
  };
  return Object.assign(restore, { [Symbol.dispose]: restore });
}

/** Makes the next chained `batch().write()` reject with `message`. */
export function failNextChainedWrite(message: string): Disposable & (() => void) {
  return failNextBatch(message, 'chained');
}

/** Makes the next `batch(array)` reject with `message`. */
export function failNextArrayBatch(message: string): Disposable & (() => void) {
  return failNextBatch(message, 'array');
}

/** True when `fd` is open on a segment store's durable log (Linux: read from /proc). */
function isDurableLog(fd: number): boolean {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`).endsWith(`${path.sep}${LOG_FILE}`);
  } catch {
    return false;
  }
}

/**
 * Makes the next write to a durable log in this process (a flush's record, or the zeros of its file
 * growing) fail with `message`, as a full disk or an I/O error would: nothing of it is written.
 * `growthOnly`: only the zeros of a growth (records are written with writev, growth with write).
 * Dispose (or call) to undo if it never ran.
 */
export function failNextLogWrite(message: string, which: { growthOnly?: boolean } = {}): Disposable & (() => void) {
  // The CommonJS `fs` object: patched there, and the ES module namespace synced to it, so modules that
  // imported `node:fs` either way see the fault. Records are written with writev, growth with write.
  type Write = (...args: unknown[]) => void;
  const nodeFs = createRequire(__filename)('node:fs') as { write: Write; writev: Write };
  const originals = { write: nodeFs.write, writev: nodeFs.writev };
  const restore = () => {
    Object.assign(nodeFs, originals);
    syncBuiltinESMExports();
  };
  for (const name of which.growthOnly ? (['write'] as const) : (['write', 'writev'] as const)) {
    nodeFs[name] = function (this: unknown, ...args: unknown[]) {
      if (!isDurableLog(args[0] as number)) return originals[name].apply(this, args);
      restore();
      const callback = args[args.length - 1] as (err: Error) => void;
      process.nextTick(() => callback(new Error(message)));
    };
  }
  syncBuiltinESMExports();
  return Object.assign(restore, { [Symbol.dispose]: restore });
}
