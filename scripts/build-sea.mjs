// Builds dist/agentctl-sea: a Node single-executable application (SEA) of dist/agentctl.cjs, for
// images without Node. Steps (see /work/shared/research/test-cluster-notes.md §5):
//  1. build the bundle (scripts/build.mjs);
//  2. node --experimental-sea-config → a blob (code cache on, the experimental warning off);
//  3. copy the running node binary, strip its symbols (~12 MB smaller; skipped if strip is missing);
//  4. inject the blob with postject under the SEA sentinel fuse.
import { spawnSync } from 'node:child_process';
import { chmodSync, copyFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const bundle = join(dist, 'agentctl.cjs');
const blob = join(dist, 'agentctl-sea.blob');
const config = join(dist, 'agentctl-sea.config.json');
const output = join(dist, 'agentctl-sea');
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

function run(command, args, { optional = false } = {}) {
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.error && optional) return false;
  if (result.error) throw new Error(`${command}: ${result.error.message}`);
  if (result.status !== 0) {
    if (optional) return false;
    throw new Error(`${command} ${args.join(' ')} exited with ${result.status}`);
  }
  return true;
}

run(process.execPath, [join(root, 'scripts/build.mjs')]);
writeFileSync(config, JSON.stringify({ main: bundle, output: blob, disableExperimentalSEAWarning: true, useCodeCache: true }, null, 2));
run(process.execPath, ['--experimental-sea-config', config]);

rmSync(output, { force: true });
copyFileSync(process.execPath, output);
chmodSync(output, 0o755);
if (!run('strip', [output], { optional: true })) console.warn('strip unavailable: keeping an unstripped node binary');
run(process.execPath, [join(root, 'node_modules/postject/dist/cli.js'), output, 'NODE_SEA_BLOB', blob, '--sentinel-fuse', FUSE]);
rmSync(blob, { force: true });
rmSync(config, { force: true });

const check = spawnSync(output, ['--version'], { encoding: 'utf8' });
if (check.status !== 0) throw new Error(`dist/agentctl-sea --version failed: ${check.stderr}`);
console.log(`built dist/agentctl-sea (${statSync(output).size} bytes), version ${check.stdout.trim()}`);
