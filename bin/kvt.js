#!/usr/bin/env -S node --initial-old-space-size=128
'use strict';
// The `kvt` command: a thin launcher for the compiled dispatcher (npm install / npm run build makes dist/).
// The shebang's node flags are those segment stores want (server-kit/node-flags.ts; a test keeps them equal).
require('../dist/bin/kvt.js').main(process.argv.slice(2));
