/**
 * Preloaded into a real kvt process (NODE_OPTIONS=--require …) to make one LevelDB write fail on
 * demand, the way a full disk or an I/O error would: when the file named by KVT_TEST_FAULT_FILE
 * exists, the next chained-batch write removes it and rejects, writing nothing. Test-only; the
 * product has no fault hooks.
 */
'use strict';
const fs = require('node:fs');
const { ClassicLevel } = require('classic-level');

const trigger = process.env.KVT_TEST_FAULT_FILE;
if (trigger) {
  const batch = ClassicLevel.prototype.batch;
  ClassicLevel.prototype.batch = function (...args) {
    const chain = batch.apply(this, args);
    if (args.length > 0) return chain;
    const write = chain.write;
    chain.write = async function (...writeArgs) {
      let armed = false;
      try {
        fs.unlinkSync(trigger);
        armed = true;
      } catch {
        // no trigger: a normal write
      }
      if (!armed) return write.apply(this, writeArgs);
      await chain.close();
      throw new Error('injected write failure');
    };
    return chain;
  };
}
