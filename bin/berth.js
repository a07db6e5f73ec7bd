#!/usr/bin/env node
// The `berth` command: runs the bundled CLI (dist/berth.js, built by `npm run build`).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

process.on('unhandledRejection', (reason) => {
  console.error('berth: unexpected error:', reason instanceof Error ? reason.message : reason);
  process.exit(1);
});

const bundle = fileURLToPath(new URL('../dist/berth.js', import.meta.url));
if (!existsSync(bundle)) {
  console.error(`berth: ${bundle} is missing; build it first with: npm run build`);
  process.exitCode = 1;
} else {
  await import(pathToFileURL(bundle).href);
}
