/**
 * `berth doctor`: checks what berth needs, one line each (ok/warn/fail) with a fix hint; with
 * `--executor NAME`, only the config and the checks of that Kubernetes executor or profile.
 * @module
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findInstallRoot, loadConfig, type ResolvedConfig } from '../../config/index.js';
import { probeBubblewrap } from '../../executors/local/index.js';
import { write } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import type { Check, CliContext, ParsedCommand } from '../types.js';
import { checkAgents } from './doctor-agents.js';
import { checkServeConfig } from './doctor-config.js';
import { checkStore, type StoreCheck } from './doctor-store.js';
import { checkAgentReads } from './doctor-sandbox.js';
import { allKubernetesTargets, kubernetesChecks, namedKubernetesTarget } from './doctor-kubernetes.js';
import { runEgressDoctor } from './doctor-egress.js';

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
  const path = local?.type === 'local' ? local.agentctlPath : join(findInstallRoot(), 'dist', 'agentctl.cjs');
  return existsSync(path)
    ? { name: 'agentctl bundle', ok: true, detail: path }
    : { name: 'agentctl bundle', ok: false, detail: `${path} is missing`, fix: 'run: npm run build' };
}

/**
 * Whether the local executors' sandbox works here (one trial bubblewrap run). An executor left at
 * the default runs its agents unconfined where it does not, so that is a failure too, never "ok".
 */
export function checkSandbox(config: ResolvedConfig | null): Check | null {
  const locals = config ? Object.values(config.executors).filter((e) => e.type === 'local') : [];
  const confined = locals.filter((e) => e.type === 'local' && e.sandbox !== 'none').map((e) => e.name);
  if (confined.length === 0) {
    return locals.length === 0 ? null : { name: 'sandbox', ok: true, detail: `off (sandbox: none) for ${locals.map((e) => e.name).join(', ')}: agents run unconfined` };
  }
  const probe = probeBubblewrap({ fresh: true });
  if (probe.ok) return { name: 'sandbox', ok: true, detail: `${probe.detail} confines the agents of ${confined.join(', ')}` };
  return { name: 'sandbox', ok: false, detail: `${probe.reason}: agents of ${confined.join(', ')} would run unconfined (or, with sandbox: bubblewrap, not launch)`, fix: probe.fix };
}

async function checkServe(ctx: CliContext, config: ResolvedConfig | null): Promise<Check[]> {
  let client;
  try {
    client = ctx.client();
  } catch {
    return [{ name: 'serve', ok: false, detail: `not running for ${ctx.dataDir}`, fix: 'start it with: berth serve' }];
  }
  try {
    const health = await client.health(AbortSignal.timeout(5000));
    const sessions = await client.list();
    const served = checkServeConfig(health.configSha256, config, 'stop it, then run berth serve (sessions keep running)');
    return [{ name: 'serve', ok: true, detail: `reachable (version ${health.version}, ${sessions.length} session(s))` }, ...(served ? [served] : [])];
  } catch (err) {
    return [{ name: 'serve', ok: false, detail: (err as Error).message, fix: 'restart it: stop the old berth serve, then run berth serve' }];
  }
}

export function renderChecks(checks: readonly Check[]): string {
  const width = Math.max(...checks.map((c) => c.name.length));
  return checks
    .map((c) => `${!c.ok ? 'fail' : c.warn ? 'warn' : 'ok  '}  ${c.name.padEnd(width)}  ${c.detail}${(c.ok && c.warn !== true) || !c.fix ? '' : `\n      ${' '.repeat(width)}  fix: ${c.fix}`}`)
    .join('\n')
    .concat('\n');
}

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const { check: configCheck, config } = checkConfig(ctx);
  const egress = cmd.values.egress;
  if (typeof egress === 'string') {
    if (config === null) return report(ctx, [configCheck]);
    return runEgressDoctor(ctx, config, egress);
  }
  const only = cmd.values.executor;
  if (typeof only === 'string') {
    if (config === null) return report(ctx, [configCheck]);
    const target = namedKubernetesTarget(config, only);
    if (target !== null) {
      const store = await checkStore(config, ctx.env);
      const k8s = await kubernetesChecks([target], { env: ctx.env, quick: false, dataDir: ctx.dataDir, ...withId(store) });
      return report(ctx, [configCheck, ...(store.check ? [store.check] : []), ...k8s]);
    }
  }
  // a local executor's checks are those of this machine: everything but the clusters
  const clusters = typeof only === 'string' || config === null ? [] : allKubernetesTargets(config);
  const store = await checkStore(config, ctx.env);
  const checks: Check[] = [
    checkNodeVersion(process.version),
    checkTool('git', ['--version'], 'install git (e.g. apt-get install git)'),
    checkTool('script', ['--version'], 'install util-linux (needed by berth shell for a PTY)'),
    checkDataDir(ctx.dataDir),
    checkAgentctl(config),
    configCheck,
    ...(store.check ? [store.check] : []),
    ...[checkSandbox(config)].filter((c): c is Check => c !== null),
    ...checkAgentReads(config, { dataDir: ctx.dataDir, env: ctx.env }),
    ...checkAgents(config, ctx.env),
    ...(await kubernetesChecks(clusters, { env: ctx.env, quick: true, dataDir: ctx.dataDir, ...withId(store) })),
    ...(await checkServe(ctx, config)),
  ];
  return report(ctx, checks);
}

/** The store's installation id for the Kubernetes checks, when the store has one to say (Postgres). */
function withId(store: StoreCheck): { installationId?: string | null } {
  return store.installationId !== undefined ? { installationId: store.installationId } : {};
}

async function report(ctx: CliContext, checks: readonly Check[]): Promise<number> {
  await write(ctx.io.stdout, renderChecks(checks));
  return checks.every((c) => c.ok) ? ExitCode.ok : ExitCode.error;
}
