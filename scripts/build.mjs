// Builds the shipped artifacts with esbuild:
//  - dist/agentctl.cjs: the single-file agentctl daemon (CommonJS, no native modules, Node >= 18),
//    the file copied into workspaces and the entry of the SEA binary;
//  - dist/agentctl-loader.cjs + dist/agentctl.cjs.v8cache: how the local executor starts that bundle,
//    from a V8 code cache written here by one real start (src/agentctl/code-cache.ts);
//  - dist/berth.js + dist/chunks/: the berth CLI and controller (ESM, split per command so a command
//    loads only what it needs; npm dependencies but zod stay external);
//  - dist/web: the dashboard, built with Vite from web/.
import { build } from 'esbuild';
import { build as viteBuild } from 'vite';
import { readFileSync, existsSync, mkdirSync, chmodSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
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

  await build({
    entryPoints: [join(root, 'src/agentctl/loader.ts')],
    outfile: join(dist, 'agentctl-loader.cjs'),
    bundle: true,
    platform: 'node',
    target: 'node18',
    format: 'cjs',
    legalComments: 'none',
    logLevel: 'warning',
  });
  // The cache belongs to this bundle and this Node: a stale one is removed first, and one that
  // cannot be written only costs agentctl its faster start (the loader compiles as usual).
  rmSync(join(dist, 'agentctl.cjs.v8cache'), { force: true });
  const cache = spawnSync(process.execPath, [join(dist, 'agentctl-loader.cjs'), '--write-code-cache', join(dist, 'agentctl.cjs')], { encoding: 'utf8', timeout: 30_000 });
  if (cache.status === 0) {
    console.log('built dist/agentctl-loader.cjs, dist/agentctl.cjs.v8cache');
    // a cache written but covering agentctl's start only (the session requests failed) says so
    if (cache.stderr.trim() !== '') console.warn(`warning: ${cache.stderr.trim()}`);
  } else console.warn(`warning: no agentctl code cache (${(cache.stderr || cache.error?.message || `exit ${cache.status}`).trim()}); agentctl starts without it`);
}

// npm packages stay external (resolved from node_modules at run time), but for these: zod is on the
// path of every command that talks to serve, and loading its ~100 ESM files one by one costs more
// than the one chunk it becomes here.
const BUNDLED_IN_CLI = new Set(['zod']);

/** An esbuild plugin: every bare import (npm package or node: builtin) is external, but `bundled`. */
function externalPackagesBut(bundled) {
  return {
    name: 'external-packages',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        const parts = args.path.split('/');
        const name = args.path.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
        return bundled.has(name) ? undefined : { external: true };
      });
    },
  };
}

const cliEntry = join(root, 'src/cli/main.ts');
if (existsSync(cliEntry)) {
  // Code splitting: dist/berth.js is the entry (bin/berth.js imports it) and each command's
  // `load: () => import(...)` in src/cli/registry.ts becomes a chunk under dist/chunks/, so a
  // trivial command (version, help, ls) does not load client-node, better-sqlite3 or pino.
  rmSync(join(dist, 'chunks'), { recursive: true, force: true });
  await build({
    entryPoints: { berth: cliEntry },
    outdir: dist,
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'esm',
    plugins: [externalPackagesBut(BUNDLED_IN_CLI)],
    sourcemap: 'linked',
    define,
    logLevel: 'warning',
  });
  console.log('built dist/berth.js (+ dist/chunks/)');

  // The front door bin/berth.js loads first (src/cli/front.ts): help and version as CommonJS, which
  // skips Node's ES module loader. The command implementations stay out (never loaded from here).
  await build({
    entryPoints: [join(root, 'src/cli/front.ts')],
    outfile: join(dist, 'berth-front.cjs'),
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    plugins: [
      {
        name: 'no-commands',
        setup(b) {
          b.onResolve({ filter: /^\.\/commands\// }, (args) => ({ path: args.path, external: true }));
        },
      },
      externalPackagesBut(new Set()),
    ],
    // output.ts makes a require() for yaml from import.meta.url (only when it formats yaml)
    banner: { js: 'const __import_meta_url = require("node:url").pathToFileURL(__filename).href;' },
    define: { ...define, 'import.meta.url': '__import_meta_url' },
    logLevel: 'warning',
  });
  console.log('built dist/berth-front.cjs');
}

// dist/web: the dashboard (web/, Preact + Vite), served by `berth serve`.
const webConfig = join(root, 'web/vite.config.ts');
if (existsSync(webConfig)) {
  await viteBuild({
    configFile: webConfig,
    root: join(root, 'web'),
    logLevel: 'warn',
    build: { outDir: join(dist, 'web'), emptyOutDir: true },
  });
  console.log('built dist/web');
}
