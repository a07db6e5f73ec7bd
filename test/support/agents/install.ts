/**
 * Pinned installs of the real ACP adapters for tests, in a cache outside the repository
 * (`$BERTH_AGENT_CACHE`, default `~/.cache/berth/agents/<name>@<version>`): an install that is
 * there (right versions, bin present) is reused; otherwise `npm install --prefix` into a temp dir
 * beside it, renamed into place when complete. A lock file (O_EXCL, holding the pid; a dead
 * holder's lock is taken over) keeps parallel test files from installing twice. Progress goes to
 * stderr: an install downloads some 400 MB and can take minutes.
 * @module
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export interface AgentPackage {
  /** The cache dir's name (before `@version`). */
  name: string;
  pkg: string;
  version: string;
  /** The adapter's entry, relative to its package dir (run with node). */
  bin: string;
  /** Further packages pinned in the same install (the adapter's own dependency on the agent). */
  pins: readonly { pkg: string; version: string }[];
}

/** Claude Code through its ACP adapter; the Claude CLI (2.1.318) comes with @anthropic-ai/claude-agent-sdk. */
export const CLAUDE_AGENT_ACP: AgentPackage = { name: 'claude-agent-acp', pkg: '@agentclientprotocol/claude-agent-acp', version: '0.101.0', bin: 'dist/index.js', pins: [] };

/** Codex through its ACP adapter, which runs `codex app-server` of @openai/codex (its dependency ^0.166.0, pinned). */
export const CODEX_ACP: AgentPackage = {
  name: 'codex-acp',
  pkg: '@agentclientprotocol/codex-acp',
  version: '2.6.0',
  bin: 'dist/index.js',
  pins: [{ pkg: '@openai/codex', version: '0.166.0' }],
};

/** How long a test waits for another process's install. */
const LOCK_WAIT_MS = 15 * 60_000;
const LOCK_POLL_MS = 500;

const progress = (line: string): void => void process.stderr.write(`[berth test agents] ${line}\n`);

/** The cache root: `$BERTH_AGENT_CACHE`, else `~/.cache/berth/agents`. */
export function agentCacheRoot(): string {
  const env = process.env.BERTH_AGENT_CACHE;
  return env !== undefined && env !== '' ? env : join(homedir(), '.cache', 'berth', 'agents');
}

/** The install dir of `a` (whether or not installed). */
export function agentDir(a: AgentPackage): string {
  return join(agentCacheRoot(), `${a.name}@${a.version}`);
}

function installedVersion(dir: string, pkg: string): string | null {
  try {
    return (JSON.parse(readFileSync(join(dir, 'node_modules', pkg, 'package.json'), 'utf8')) as { version?: string }).version ?? null;
  } catch {
    return null;
  }
}

/** Whether `dir` holds `a` complete: every pinned version in place and the entry present. */
export function isInstalled(a: AgentPackage, dir = agentDir(a)): boolean {
  const all = [{ pkg: a.pkg, version: a.version }, ...a.pins];
  return all.every((p) => installedVersion(dir, p.pkg) === p.version) && existsSync(join(dir, 'node_modules', a.pkg, a.bin));
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock file (O_EXCL), taking over one whose holder is dead; false when a live process holds it. */
function tryLock(lock: string): boolean {
  try {
    const fd = openSync(lock, 'wx', 0o600);
    writeSync(fd, String(process.pid));
    closeSync(fd);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const holder = Number(readFileSync(lock, 'utf8').trim());
  if (Number.isInteger(holder) && holder > 0 && alive(holder)) return false;
  progress(`taking over the stale lock ${lock} (pid ${holder || '?'} is gone)`);
  unlinkSync(lock);
  return tryLock(lock);
}

function npmInstall(dir: string, specs: string[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['install', '--prefix', dir, '--save-exact', '--no-audit', '--no-fund', ...specs], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, npm_config_update_notifier: 'false' },
    });
    let tail = '';
    const onData = (d: Buffer): void => {
      for (const line of d.toString('utf8').split('\n')) if (line.trim() !== '') progress(`npm: ${line.trim().slice(0, 200)}`);
      tail = (tail + d.toString('utf8')).slice(-4000);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    // npm is silent while it downloads: a line every 15 s says the install is alive
    const started = Date.now();
    const beat = setInterval(() => progress(`still installing ${specs[0] ?? ''} (${Math.round((Date.now() - started) / 1000)} s)`), 15_000);
    child.once('error', (err) => {
      clearInterval(beat);
      reject(err);
    });
    child.once('close', () => clearInterval(beat));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`npm install ${specs.join(' ')} exited with ${code}:\n${tail}`))));
  });
}

async function install(a: AgentPackage, dir: string): Promise<void> {
  const specs = [`${a.pkg}@${a.version}`, ...a.pins.map((p) => `${p.pkg}@${p.version}`)];
  const tmp = `${dir}.installing-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  writeFileSync(join(tmp, 'package.json'), '{"private":true}\n');
  const started = Date.now();
  progress(`installing ${specs.join(' ')} into ${dir} (about 400 MB; this can take minutes)`);
  try {
    await npmInstall(tmp, specs);
    if (!isInstalled(a, tmp)) throw new Error(`npm install ${specs.join(' ')} left an incomplete install in ${tmp}`);
    // an incomplete install left by a killed run is replaced; a complete one was reused before this
    rmSync(dir, { recursive: true, force: true });
    renameSync(tmp, dir);
  } catch (err) {
    rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  progress(`installed ${a.pkg}@${a.version} in ${Math.round((Date.now() - started) / 1000)} s`);
}

/** The install dir of `a`, installing it first unless already there (one install at a time per package). */
export async function ensureAgent(a: AgentPackage): Promise<string> {
  const dir = agentDir(a);
  if (isInstalled(a, dir)) return dir;
  mkdirSync(agentCacheRoot(), { recursive: true });
  const lock = `${dir}.lock`;
  const deadline = Date.now() + LOCK_WAIT_MS;
  let told = false;
  while (!tryLock(lock)) {
    if (!told) progress(`waiting for another process installing ${a.pkg}@${a.version} (${lock})`);
    told = true;
    if (Date.now() > deadline) throw new Error(`timed out after ${LOCK_WAIT_MS / 60_000} min waiting for the lock ${lock}`);
    await new Promise((r) => setTimeout(r, LOCK_POLL_MS));
  }
  try {
    if (!isInstalled(a, dir)) await install(a, dir);
  } finally {
    unlinkSync(lock);
  }
  return dir;
}

/** The absolute path of an installed adapter's entry (a node script), installing it if needed. */
export async function agentBin(a: AgentPackage): Promise<string> {
  return join(await ensureAgent(a), 'node_modules', a.pkg, a.bin);
}

/** `claude-agent-acp`'s entry (`node <it>` runs Claude Code over ACP on stdio). */
export function claudeAgentAcpBin(): Promise<string> {
  return agentBin(CLAUDE_AGENT_ACP);
}

/** `codex-acp`'s entry (`node <it>` runs Codex over ACP on stdio). */
export function codexAcpBin(): Promise<string> {
  return agentBin(CODEX_ACP);
}

/** The pinned `codex` launcher of the Codex install (`CODEX_PATH`), installing it if needed. */
export async function codexBin(): Promise<string> {
  return join(await ensureAgent(CODEX_ACP), 'node_modules', '@openai', 'codex', 'bin', 'codex.js');
}
