/**
 * Fault injection into LevelDB writes. LevelDB cannot be made to fail on demand (a full disk or an
 * I/O error), so the next chained-batch write of any ClassicLevel in this process is made to fail
 * the way classic-level reports one: its promise rejects and nothing of the batch is written.
 */
import { ClassicLevel } from 'classic-level';

/** Makes the next chained `batch().write()` reject with `message`; dispose (or call) to undo if it never ran. */
export function failNextChainedWrite(message: string): Disposable & (() => void) {
  const proto = ClassicLevel.prototype as unknown as { batch: (...args: unknown[]) => unknown };
  const original = proto.batch;
  const restore = () => {
    proto.batch = original;
  };
  proto.batch = function (this: ClassicLevel<Buffer, Buffer>, ...args: unknown[]) {
    const chain = original.apply(this, args);
    if (args.length > 0) return chain; // batch(array): not the chained form
    restore();
    const c = chain as { write: (...a: unknown[]) => Promise<void>; close: () => Promise<void> };
    c.write = async () => {
      await c.close();
      throw new Error(message);
    };
    return chain;
  };
  return Object.assign(restore, { [Symbol.dispose]: restore });
}
