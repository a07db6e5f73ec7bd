/**
 * Node started while the bootstrap upload is still in flight. Where the image has `node`, the start
 * command execs `node -e` {@link PRESTART_JS} at once, as the container starts: Node boots and loads
 * the built-in modules agentctl uses while the controller is still noticing the container and
 * uploading; the start marker is then seen through an inotify watch (no poll interval), and
 * agentctl's bundle runs in that same process, which stays PID 1. Only the common case runs that way
 * (the bundle flavor, whose delivery writes {@link BootstrapPaths.agentctlPrestart}, prepare.sh
 * already done or run by the bootstrap exec, env files exactly as Berth writes them); anything else
 * runs the unchanged shell start command as a child, so no case depends on this path.
 *
 * The program is ES5 and touches only APIs every Node version has: an old `node` in the image (one
 * the SEA flavor was chosen for) must still parse it and fall back.
 * @module
 */
import type { BootstrapPaths } from './paths.js';
import { shQuote } from './shell.js';

/**
 * What the delivery of a bundle writes to {@link BootstrapPaths.agentctlPrestart}: the file to
 * require (the loader, or the bundle itself) and the arguments agentctl's argv gets after it.
 */
export interface PrestartPlan {
  main: string;
  args: string[];
}

/**
 * The pre-start program. argv after `node`: the start marker, the `prepared` and `prepare.exec`
 * markers, runtime.env, auth.env, the prestart plan, the shell start command (for the fallback).
 */
const PRESTART_JS = String.raw`'use strict';
var fs = require('fs'), pathMod = require('path'), cp = require('child_process');
var a = process.argv.slice(1);
var marker = a[0], prepared = a[1], inExec = a[2], runtimeEnv = a[3], authEnv = a[4], planFile = a[5], shell = a[6];
function stopped() { process.exit(143); }
process.on('SIGTERM', stopped);
process.on('SIGINT', stopped);
['http', 'net', 'crypto', 'child_process', 'zlib', 'os', 'url', 'util', 'stream', 'events', 'readline', 'tty'].forEach(function (m) {
  try { require(m); } catch (e) { /* absent from this Node */ }
});
function exists(p) { try { fs.statSync(p); return true; } catch (e) { return false; } }
function parseEnv(text) {
  var env = {}, rest = text, line = /^([A-Za-z_][A-Za-z0-9_]*)=((?:'[^']*'|\\')+)\n/, m;
  while (rest.length > 0) {
    m = line.exec(rest);
    if (m === null) return null;
    env[m[1]] = m[2].replace(/'([^']*)'|\\'/g, function (all, quoted) { return all === "\\'" ? "'" : quoted; });
    rest = rest.slice(m[0].length);
  }
  return env;
}
function fallback() {
  process.removeListener('SIGTERM', stopped);
  process.removeListener('SIGINT', stopped);
  var child = cp.spawn('sh', ['-c', shell], { stdio: 'inherit' });
  ['SIGTERM', 'SIGINT', 'SIGHUP'].forEach(function (s) { process.on(s, function () { child.kill(s); }); });
  child.on('exit', function (code, signal) { process.exit(code === null ? (signal === 'SIGKILL' ? 137 : 143) : code); });
}
function start() {
  var plan, env1, env2, k;
  try {
    if (!exists(prepared) && !exists(inExec)) return fallback();
    plan = JSON.parse(fs.readFileSync(planFile, 'utf8'));
    env1 = parseEnv(fs.readFileSync(runtimeEnv, 'utf8'));
    env2 = parseEnv(fs.readFileSync(authEnv, 'utf8'));
  } catch (e) { return fallback(); }
  if (!plan || typeof plan.main !== 'string' || !Array.isArray(plan.args) || env1 === null || env2 === null) return fallback();
  for (k in env1) process.env[k] = env1[k];
  for (k in env2) process.env[k] = env2[k];
  process.removeListener('SIGTERM', stopped);
  process.removeListener('SIGINT', stopped);
  process.argv = [process.execPath, plan.main].concat(plan.args);
  try { process.title = ['node', plan.main].concat(plan.args).join(' '); } catch (e) { /* ps shows the node -e line */ }
  require(plan.main);
}
var done = false, watcher = null, timer = null;
function check() {
  if (done || !exists(marker)) return;
  done = true;
  if (watcher !== null) watcher.close();
  clearInterval(timer);
  start();
}
try { watcher = fs.watch(pathMod.dirname(marker), check); } catch (e) { watcher = null; }
timer = setInterval(check, watcher === null ? 20 : 250);
check();
`;

/**
 * The start command's first line: exec the pre-start in `node` when the image has it and the marker
 * is not there yet (a container restart finds it and goes the shell way, as before). `shellRest`:
 * the shell start command the pre-start falls back to.
 */
export function prestartLine(paths: BootstrapPaths, shellRest: string): string {
  const q = shQuote;
  const args = [paths.startMarker, paths.preparedMarker, paths.prepareInExecMarker, paths.runtimeEnv, paths.authEnv, paths.agentctlPrestart, shellRest].map(q).join(' ');
  return `if [ ! -e ${q(paths.startMarker)} ] && command -v node >/dev/null 2>&1; then exec node -e ${q(PRESTART_JS)} -- ${args}; fi`;
}
