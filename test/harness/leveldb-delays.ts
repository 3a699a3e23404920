/**
 * Slow storage reads, as a busy disk or a full thread pool makes them: the one-shot reads of any
 * ClassicLevel in this process (`get`, `getMany`, or `all()` of an iterator of entries or keys) answer
 * up to `maxMs` late, at random, after LevelDB has read them (their snapshot and result are those of
 * the moment they were asked). A reader's steps then straddle the storage writes and the updates that
 * run meanwhile, which on an idle disk they rarely do. `getMany-queued` instead delays a `getMany`
 * before LevelDB reads it, as a full thread pool does: it reads the state of a later moment unless
 * it names a snapshot.
 */
import { ClassicLevel } from 'classic-level';

type Read = (...args: unknown[]) => Promise<unknown>;
type IteratorFactory = (...args: unknown[]) => { all: Read };

/** The one-shot reads that can be delayed: `all()` of iterators, `get`, `getMany`. */
export type OneShotRead = 'all' | 'get' | 'getMany' | 'getMany-queued';

/** Delays the answers of the reads `which` (see the module comment) by 0…`maxMs` ms (from `rand`); dispose to undo. */
export function delayOneShotReads(rand: () => number, maxMs: number, which: readonly OneShotRead[]): Disposable & (() => void) {
  const proto = ClassicLevel.prototype as unknown as Record<'iterator' | 'keys', IteratorFactory> & Record<'get' | 'getMany', Read>;
  const originals = { iterator: proto.iterator, keys: proto.keys, get: proto.get, getMany: proto.getMany };
  const late = async (read: Promise<unknown>): Promise<unknown> => {
    const result = await read;
    await new Promise((resolve) => setTimeout(resolve, rand() * maxMs));
    return result;
  };
  for (const name of which.includes('all') ? (['iterator', 'keys'] as const) : []) {
    proto[name] = function (this: unknown, ...args: unknown[]) {
      const it = originals[name].apply(this, args);
      const all = it.all.bind(it);
      it.all = (...a: unknown[]) => late(all(...a));
      return it;
    };
  }
  for (const name of (['get', 'getMany'] as const).filter((n) => which.includes(n))) {
    proto[name] = function (this: unknown, ...args: unknown[]) {
      return late(originals[name].apply(this, args));
    };
  }
  if (which.includes('getMany-queued')) {
    const getMany = proto.getMany;
    proto.getMany = function (this: unknown, ...args: unknown[]) {
      return new Promise((resolve) => setTimeout(resolve, rand() * maxMs)).then(() => getMany.apply(this, args));
    };
  }
  const restore = () => Object.assign(proto, originals);
  return Object.assign(restore, { [Symbol.dispose]: restore });
}
