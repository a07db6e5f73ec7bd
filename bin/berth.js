#!/usr/bin/env node
// The `berth` command: the front door (dist/berth-front.cjs) answers help and version at once; every
// other command runs the bundled CLI (dist/berth.js); both are built by `npm run build`. CommonJS
// (bin/package.json): a command that needs no ES module loader does not pay for starting it.
'use strict';
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { pathToFileURL } = require('node:url');

process.on('unhandledRejection', (reason) => {
  console.error('berth: unexpected error:', reason instanceof Error ? reason.message : reason);
  process.exit(1);
});

const dist = join(__dirname, '..', 'dist');
const front = join(dist, 'berth-front.cjs');
const bundle = join(dist, 'berth.js');
const missing = [front, bundle].find((f) => !existsSync(f));
if (missing !== undefined) {
  console.error(`berth: ${missing} is missing; build it first with: npm run build`);
  process.exitCode = 1;
} else if (!require(front).runFront(process.argv.slice(2))) {
  import(pathToFileURL(bundle).href);
}
