/**
 * Preloaded into a real kvt process (NODE_OPTIONS=--require …) to make one LevelDB write fail on
 * demand, the way a full disk or an I/O error would: when the file named by KVT_TEST_FAULT_FILE
 * exists, the next batch write (chained, as the segment store writes, or `batch(array)`, as the
 * controller does) removes it and rejects, writing nothing. Or to stall writes, as a slow disk
 * would: while the file named by KVT_TEST_HOLD_FILE exists, a chained batch write creates
 * `<that file>.waiting` and waits (so a test can SIGKILL the process with the write not done).
 * Test-only; the product has no fault hooks.
 */
'use strict';
const fs = require('node:fs');
const { ClassicLevel } = require('classic-level');

const hold = process.env.KVT_TEST_HOLD_FILE;
if (hold) {
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
