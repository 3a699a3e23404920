/**
 * Preloaded into a real kvt process (NODE_OPTIONS=--require …) to make one storage write fail on
 * demand, the way a full disk or an I/O error would: when the file named by KVT_TEST_FAULT_FILE
 * exists, the next write to a segment store's durable log (where a flush goes first), or the next
 * LevelDB batch write (chained, as the segment store applies, or `batch(array)`, as the controller
 * writes), removes it and fails, writing nothing. Or to stall writes, as a slow disk would: while
 * the file named by KVT_TEST_HOLD_FILE exists, a durable log write or a chained batch write creates
 * `<that file>.waiting` and waits (so a test can SIGKILL the process with the write not done); a
 * durable log record (a flush of acknowledged-to-be updates, not the log's growth and not an apply
 * to LevelDB of earlier ones) also creates `<that file>.record-waiting`.
 * Test-only; the product has no fault hooks.
 */
'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { ClassicLevel } = require('classic-level');

/** The segment store's durable log file name (segmentstore/storage/durable-log.ts LOG_FILE). */
const LOG_FILE = 'kvt-durable-log';
function isDurableLog(fd) {
  try {
    return fs.readlinkSync(`/proc/self/fd/${fd}`).endsWith(`${path.sep}${LOG_FILE}`);
  } catch {
    return false;
  }
}
/**
 * Runs `decide(go, record)` before each durable log write (writev for records, write for growth): it
 * calls back `go(err?)` to write (or fail) it; `record` is true for a record.
 */
function interceptLogWrites(decide) {
  for (const name of ['write', 'writev']) {
    const previous = fs[name];
    fs[name] = function (...args) {
      if (typeof args[0] !== 'number' || !isDurableLog(args[0])) return previous.apply(this, args);
      decide(
        (err) => {
          if (err) process.nextTick(args[args.length - 1], err);
          else previous.apply(this, args);
        },
        name === 'writev',
      );
    };
  }
}

const hold = process.env.KVT_TEST_HOLD_FILE;
if (hold) {
  interceptLogWrites(async (go, record) => {
    if (fs.existsSync(hold)) {
      fs.writeFileSync(`${hold}.waiting`, '');
      if (record) fs.writeFileSync(`${hold}.record-waiting`, '');
    }
    while (fs.existsSync(hold)) await new Promise((r) => setTimeout(r, 5));
    go();
  });
  const batch = ClassicLevel.prototype.batch;
  ClassicLevel.prototype.batch = function (...args) {
    const chain = batch.apply(this, args);
    if (args.length > 0) return chain;
    const write = chain.write;
    chain.write = async function (...writeArgs) {
      if (fs.existsSync(hold)) fs.writeFileSync(`${hold}.waiting`, '');
      while (fs.existsSync(hold)) await new Promise((r) => setTimeout(r, 5));
      return write.apply(this, writeArgs);
    };
    return chain;
  };
}

const trigger = process.env.KVT_TEST_FAULT_FILE;
if (trigger) {
  const armed = () => {
    try {
      fs.unlinkSync(trigger);
      return true;
    } catch {
      return false; // no trigger: a normal write
    }
  };
  interceptLogWrites((go) => go(armed() ? new Error('injected write failure') : undefined));
  const batch = ClassicLevel.prototype.batch;
  ClassicLevel.prototype.batch = function (...args) {
    if (args.length > 0) return armed() ? Promise.reject(new Error('injected write failure')) : batch.apply(this, args);
    const chain = batch.apply(this, args);
    const write = chain.write;
    chain.write = async function (...writeArgs) {
      if (!armed()) return write.apply(this, writeArgs);
      await chain.close();
      throw new Error('injected write failure');
    };
    return chain;
  };
}
