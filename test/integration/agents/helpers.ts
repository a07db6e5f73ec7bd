/**
 * Helpers of the real-agent tests: a Berth data dir with a berth.yaml naming one real ACP agent,
 * the real `berth serve`, a repository to launch on, polling of the CLI's views, and the places a
 * secret must never reach (status, logs, the inventory's bytes, serve's and agentctl's logs).
 * @module
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureBuilt, removeSessionsAndStop, runCli, startServeProcess, until as pollUntil, type CliResult } from '../cli/helpers.js';

/** The fake API key the tests pass as secret env: it must reach the model server and nowhere else. */
export const FAKE_KEY = `sk-berth-fake-${process.pid}-5f1c0e7a9b3d`;

export interface AcpEventLine {
  seq: number;
  at: string;
  event: { type: string; turn?: number | null; update?: Record<string, unknown>; stop_reason?: string };
}

export interface View {
  state: string;
  protocol?: string;
  agentProcess: { status: string; turns?: number; turnRunning?: boolean; pendingApprovals?: number } | null;
}

/** Polls `check` until it returns a value (up to 90 s: a real agent's turn). */
export const until = <T>(what: string, check: () => Promise<T | undefined>, ms = 90_000): Promise<T> => pollUntil(what, check, ms);

/**
 * A git repository for the agents: a README to edit. Nothing agent-specific: that Claude Code asks
 * before an edit comes from the claude preset (its session mode), not from project settings.
 */
function makeAgentRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]): void => void execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), '# demo\n');
  git('add', '.');
  git('commit', '-qm', 'init');
}

export interface Berth {
  root: string;
  dataDir: string;
  repo: string;
  cli(...args: string[]): Promise<CliResult>;
  serveOutput(): string;
  close(): Promise<void>;
}

/**
 * A data dir holding `config` as berth.yaml, a repository and a running `berth serve` whose
 * environment has `env` (the secrets a launch may pass with --secret-env). The root is under
 * /var/tmp, not /tmp: Codex refuses to put its helper binaries in a CODEX_HOME below the temp dir
 * (the private home of a session lies in the data dir).
 */
export async function startBerth(config: string, env: Record<string, string>): Promise<Berth> {
  ensureBuilt();
  const root = mkdtempSync(join('/var/tmp', 'berth-real-agents-'));
  const dataDir = join(root, 'data');
  const repo = join(root, 'repo');
  mkdirSync(dataDir, { recursive: true });
  writeFileSync(join(dataDir, 'berth.yaml'), config);
  makeAgentRepo(repo);
  let serve: ChildProcess | undefined;
  try {
    const started = await startServeProcess(dataDir, [], { BERTH_LOG_LEVEL: 'debug', ...env });
    serve = started.child;
    return {
      root,
      dataDir,
      repo,
      cli: (...args: string[]) => runCli(args, { dataDir }),
      serveOutput: started.output,
      close: async () => {
        await removeSessionsAndStop(dataDir, serve);
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (err) {
    rmSync(root, { recursive: true, force: true });
    throw err;
  }
}

/** The session's ACP events (`berth logs -o json`). */
export async function events(b: Berth, id: string): Promise<AcpEventLine[]> {
  const out = await b.cli('logs', '-o', 'json', id);
  return out.stdout
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as AcpEventLine);
}

export async function view(b: Berth, id: string): Promise<View> {
  return JSON.parse((await b.cli('status', id, '-o', 'json')).stdout) as View;
}

export function waitApprovals(b: Berth, id: string, n: number, ms?: number): Promise<View> {
  return until(`${n} pending approval(s) in ${id}`, async () => {
    const v = await view(b, id);
    return v.agentProcess?.pendingApprovals === n ? v : undefined;
  }, ms);
}

/** Waits for the end of turn `turn` in the transcript and returns the transcript. */
export function waitTurnEnd(b: Berth, id: string, turn: number, ms?: number): Promise<string> {
  return until(`turn ${turn} of ${id} to end`, async () => {
    const text = (await b.cli('logs', id)).stdout;
    return text.includes(`== turn ${turn} ended`) ? text : undefined;
  }, ms);
}

/** Launches `agent` on the repo with `prompt` (its preset passes the key); returns the id and when the launch began. */
export async function launch(b: Berth, agent: string, prompt: string): Promise<{ id: string; startedAt: number }> {
  const startedAt = Date.now();
  const r = await b.cli('launch', '--repo', b.repo, '--agent', agent, '--prompt', prompt);
  const id = /Session (\S+) is ready/.exec(r.stdout)?.[1];
  if (r.code !== 0 || id === undefined) throw new Error(`berth launch failed (${r.code}):\n${r.stdout}\n${r.stderr}`);
  return { id, startedAt };
}

/** Milliseconds from `startedAt` to the first `update` event (the agent's first session/update). */
export async function msToFirstUpdate(b: Berth, id: string, startedAt: number): Promise<number> {
  const first = await until('a first update event', async () => (await events(b, id)).find((e) => e.event.type === 'update'));
  return Date.parse(first.at) - startedAt;
}

/** Every file under `dir` (recursively), except below the directories `skip` names. */
function filesUnder(dir: string, skip: (path: string) => boolean): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (skip(path)) continue;
    const st = statSync(path, { throwIfNoEntry: false });
    if (st?.isDirectory()) out.push(...filesUnder(path, skip));
    else if (st?.isFile()) out.push(path);
  }
  return out;
}

/**
 * The files of the data dir, other than the agents' own ground (each session's private home and
 * workspace), that hold `secret`: the inventory (berth.db and its WAL/SHM), agentctl's state and
 * logs, anything else Berth writes. Names only, never contents.
 */
const AGENTS_OWN = /\/workspaces\/[^/]+\/(home|repo)$|\/agents\/[^/]+$/;

export function dataDirFilesHolding(dataDir: string, secret: string): string[] {
  return filesUnder(dataDir, (p) => AGENTS_OWN.test(p)).filter((p) => readFileSync(p).includes(secret));
}

/** The files of the agents' own ground (private homes, per-session agent state) that hold `secret` (reported, not Berth's). */
export function privateHomeFilesHolding(dataDir: string, secret: string): string[] {
  const own = filesUnder(join(dataDir, 'workspaces'), () => false).filter((p) => /\/workspaces\/[^/]+\/home\/|\/agents\/[^/]+\//.test(p));
  return own.filter((p) => readFileSync(p).includes(secret));
}
