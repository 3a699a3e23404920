/**
 * Fault injection into LevelDB writes. LevelDB cannot be made to fail on demand (a full disk or an
 * I/O error), so the next write of any ClassicLevel in this process is made to fail the way
 * classic-level reports one: its promise rejects and nothing of the batch is written.
 */
import { ClassicLevel } from 'classic-level';

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
