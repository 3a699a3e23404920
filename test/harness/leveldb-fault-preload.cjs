/**
 * Preloaded into a real kvt process (NODE_OPTIONS=--require …) to make one LevelDB write fail on
 * demand, the way a full disk or an I/O error would: when the file named by KVT_TEST_FAULT_FILE
 * exists, the next batch write (chained, as the segment store writes, or `batch(array)`, as the
 * controller does) removes it and rejects, writing nothing. Test-only; the product has no fault hooks.
 */
'use strict';
const fs = require('node:fs');
const { ClassicLevel } = require('classic-level');

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
