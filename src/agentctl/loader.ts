/**
 * agentctl's start-up loader (dist/agentctl-loader.cjs): runs the bundle from its V8 code cache
 * when a valid one lies beside it, or writes that cache (the build does). See code-cache.ts.
 *
 *   node agentctl-loader.cjs <bundle> [agentctl args…]
 *   node agentctl-loader.cjs --write-code-cache <bundle>
 * @module
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { codeCachePath, compile, readCodeCache, run, sha256, WRITE_FLAG, writeCodeCache } from './code-cache.js';

/** Set to 1, the loader says on stderr whether the cache was used, rejected by V8, or not there/not this bundle's. */
const REPORT_ENV = 'AGENTCTL_CODE_CACHE_REPORT';

function main(argv: string[]): void {
  const [first, ...rest] = argv;
  if (first === WRITE_FLAG) {
    if (!rest[0]) throw new Error(`usage: agentctl-loader ${WRITE_FLAG} <bundle>`);
    void writeCodeCache(rest[0]);
    return;
  }
  if (!first) throw new Error('usage: agentctl-loader <bundle> [args…]');
  const bundle = resolve(first); // the module's filename and require() root must be absolute
  const source = readFileSync(bundle, 'utf8');
  const cache = readCodeCache(codeCachePath(bundle), sha256(source));
  const script = compile(bundle, source, cache);
  if (process.env[REPORT_ENV] === '1') {
    process.stderr.write(`agentctl-loader: code cache ${cache === undefined ? 'none' : script.cachedDataRejected === true ? 'rejected' : 'used'}\n`);
  }
  run(script, bundle, rest);
}

main(process.argv.slice(2));
