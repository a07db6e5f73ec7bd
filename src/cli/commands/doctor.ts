/**
 * `berth doctor`: checks what berth needs, one line each (ok/fail) with a fix hint.
 * @module
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type ResolvedConfig } from '../../config/index.js';
import { write, type CliContext } from '../context.js';
import { ExitCode } from '../exit-codes.js';

export interface Check {
  name: string;
  ok: boolean;
  detail: string;
  fix?: string;
}

const MIN_NODE = [20, 19] as const;

export function checkNodeVersion(version: string): Check {
  const [major = 0, minor = 0] = version.replace(/^v/, '').split('.').map(Number);
  const ok = major > MIN_NODE[0] || (major === MIN_NODE[0] && minor >= MIN_NODE[1]);
  return {
    name: 'node',
    ok,
    detail: `${version} (need >= ${MIN_NODE.join('.')})`,
    ...(ok ? {} : { fix: 'install Node.js 20.19 or newer (https://nodejs.org)' }),
  };
}

function checkTool(name: string, args: string[], fix: string): Check {
  const r = spawnSync(name, args, { encoding: 'utf8', timeout: 5000 });
  if (r.error || r.status !== 0) return { name, ok: false, detail: 'not found or not working', fix };
  return { name, ok: true, detail: (r.stdout || r.stderr).split('\n')[0]?.trim() ?? '' };
}

function checkDataDir(dataDir: string): Check {
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const probe = join(dataDir, `.doctor-${process.pid}`);
    writeFileSync(probe, 'ok');
    rmSync(probe);
    accessSync(dataDir, constants.W_OK);
    return { name: 'data dir', ok: true, detail: `${dataDir} is writable` };
  } catch (err) {
    return {
      name: 'data dir',
      ok: false,
      detail: `${dataDir}: ${(err as Error).message}`,
      fix: 'fix its permissions, or pick another with --data-dir / $BERTH_DATA_DIR',
    };
  }
}

function checkConfig(ctx: CliContext): { check: Check; config: ResolvedConfig | null } {
  try {
    const config = loadConfig({ dataDir: ctx.dataDir, ...(ctx.configPath !== undefined ? { path: ctx.configPath } : {}) });
    return { check: { name: 'config', ok: true, detail: config.source ?? 'built-in defaults (no berth.yaml)' }, config };
  } catch (err) {
    return { check: { name: 'config', ok: false, detail: (err as Error).message, fix: 'correct the named field (see the README config section)' }, config: null };
  }
}

function checkAgentctl(config: ResolvedConfig | null): Check {
  const local = config ? Object.values(config.executors).find((e) => e.type === 'local') : undefined;
  const path = local?.type === 'local' ? local.agentctlPath : fileURLToPath(new URL('./agentctl.cjs', import.meta.url));
  return existsSync(path)
    ? { name: 'agentctl bundle', ok: true, detail: path }
    : { name: 'agentctl bundle', ok: false, detail: `${path} is missing`, fix: 'run: npm run build' };
}

async function checkServe(ctx: CliContext): Promise<Check> {
  let client;
  try {
    client = ctx.client();
  } catch {
    return { name: 'serve', ok: false, detail: `not running for ${ctx.dataDir}`, fix: 'start it with: berth serve' };
  }
  try {
    const health = await client.health(AbortSignal.timeout(5000));
    const sessions = await client.list();
    return { name: 'serve', ok: true, detail: `reachable (version ${health.version}, ${sessions.length} session(s))` };
  } catch (err) {
    return { name: 'serve', ok: false, detail: (err as Error).message, fix: 'restart it: stop the old berth serve, then run berth serve' };
  }
}

export function renderChecks(checks: readonly Check[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  return checks
    .map((c) => `${c.ok ? 'ok  ' : 'fail'}  ${c.name.padEnd(width)}  ${c.detail}${c.ok || !c.fix ? '' : `\n      ${' '.repeat(width)}  fix: ${c.fix}`}`)
    .join('\n')
    .concat('\n');
}

export async function run(ctx: CliContext): Promise<number> {
  const { check: configCheck, config } = checkConfig(ctx);
  const checks: Check[] = [
    checkNodeVersion(process.version),
    checkTool('git', ['--version'], 'install git (e.g. apt-get install git)'),
    checkTool('script', ['--version'], 'install util-linux (needed by berth shell for a PTY)'),
    checkDataDir(ctx.dataDir),
    checkAgentctl(config),
    configCheck,
    await checkServe(ctx),
  ];
  await write(ctx.io.stdout, renderChecks(checks));
  return checks.every((c) => c.ok) ? ExitCode.ok : ExitCode.error;
}
