// Builds the shipped artifacts with esbuild:
//  - dist/agentctl.cjs: the single-file agentctl daemon (CommonJS, no native modules, Node >= 18),
//    the file copied into workspaces and the entry of the SEA binary;
//  - dist/berth.js: the berth CLI and controller (ESM; npm dependencies stay external).
import { build } from 'esbuild';
import { readFileSync, existsSync, mkdirSync, chmodSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const dist = join(root, 'dist');
mkdirSync(dist, { recursive: true });

const define = { __BERTH_VERSION__: JSON.stringify(pkg.version) };

const agentctlEntry = join(root, 'src/agentctl/main.ts');
if (existsSync(agentctlEntry)) {
  await build({
    entryPoints: [agentctlEntry],
    outfile: join(dist, 'agentctl.cjs'),
    bundle: true,
    platform: 'node',
    target: 'node18',
    format: 'cjs',
    minify: false,
    sourcemap: false,
    legalComments: 'none',
    banner: { js: '#!/usr/bin/env node' },
    define: {
      ...define,
      // ws probes for optional native helpers; the bundle must stay pure JavaScript.
      'process.env.WS_NO_BUFFER_UTIL': '"1"',
      'process.env.WS_NO_UTF_8_VALIDATE': '"1"',
    },
    logLevel: 'warning',
  });
  chmodSync(join(dist, 'agentctl.cjs'), 0o755);
  console.log('built dist/agentctl.cjs');
}

const cliEntry = join(root, 'src/cli/main.ts');
if (existsSync(cliEntry)) {
  await build({
    entryPoints: [cliEntry],
    outfile: join(dist, 'berth.js'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    packages: 'external',
    sourcemap: 'linked',
    define,
    logLevel: 'warning',
  });
  console.log('built dist/berth.js');
}
