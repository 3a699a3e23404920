#!/usr/bin/env node
'use strict';
// The `kvt` command: a thin launcher for the compiled dispatcher (npm install / npm run build makes dist/).
require('../dist/bin/kvt.js').main(process.argv.slice(2));
