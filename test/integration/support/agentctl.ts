/**
 * Runs the built agentctl bundle (dist/agentctl.cjs) as a real child process on free loopback
 * ports, with a temporary workspace and a random nonce, and talks to it over raw HTTP.
 * @module
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmdirSync, rmSync, statSync } from 'node:fs';
import WebSocket from 'ws';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../../..');
export const BUNDLE = join(ROOT, 'dist/agentctl.cjs');
const SOURCES = ['src/agentctl', 'src/protocol', 'src/shared'].map((d) => join(ROOT, d));

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Builds dist/agentctl.cjs when it is missing or older than its sources (one builder at a time). */
export async function ensureBuilt(): Promise<void> {
  const stale = (): boolean => !existsSync(BUNDLE) || statSync(BUNDLE).mtimeMs < Math.max(...SOURCES.map(newestMtime));
  if (!stale()) return;
  mkdirSync(join(ROOT, 'dist'), { recursive: true });
  const lock = join(ROOT, 'dist/.agentctl-build-lock');
  for (;;) {
    try {
      mkdirSync(lock);
      break;
    } catch {
      await sleep(100);
    }
  }
  try {
    if (!stale()) return;
    const result = spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { cwd: ROOT, encoding: 'utf8' });
    if (result.status !== 0) throw new Error(`building agentctl failed: ${result.stderr}`);
  } finally {
    rmdirSync(lock);
  }
}

/** `count` distinct free loopback ports (all held open until every one is found). */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const server = createServer();
      await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
      servers.push(server);
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

export function tempDir(prefix = 'agentctl-it-'): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

export interface AgentctlOptions {
  /** `null` starts agentctl without a nonce. Default: random. */
  nonce?: string | null;
  env?: Record<string, string>;
  instancePortCount?: number;
  /** The program to run (default: this Node running dist/agentctl.cjs), e.g. the SEA binary. */
  command?: string[];
}

export interface JsonResponse<T = unknown> {
  status: number;
  body: T;
  headers: Headers;
}

const live = new Set<AgentctlProcess>();

/** One agentctl child process; `restart()` starts a new process with the same ports, nonce and env. */
export class AgentctlProcess {
  #child: ChildProcess | null = null;
  #exit: Promise<number | null> = Promise.resolve(null);
  stderr = '';

  private constructor(
    readonly controlPort: number,
    readonly instancePorts: number[],
    readonly nonce: string | null,
    readonly env: Record<string, string>,
    readonly command: string[],
  ) {}

  static async start(options: AgentctlOptions = {}): Promise<AgentctlProcess> {
    await ensureBuilt();
    const [controlPort, ...instancePorts] = await freePorts(1 + (options.instancePortCount ?? 4));
    const nonce = options.nonce === undefined ? randomBytes(16).toString('hex') : options.nonce;
    const proc = new AgentctlProcess(controlPort as number, instancePorts, nonce, options.env ?? {}, options.command ?? [process.execPath, BUNDLE]);
    await proc.#spawn();
    return proc;
  }

  get pid(): number {
    const pid = this.#child?.pid;
    if (pid === undefined) throw new Error('agentctl is not running');
    return pid;
  }

  get url(): string {
    return `http://127.0.0.1:${this.controlPort}`;
  }

  async #spawn(): Promise<void> {
    const env: Record<string, string> = {
      PATH: process.env['PATH'] ?? '/usr/bin:/bin',
      HOME: process.env['HOME'] ?? '/tmp',
      AGENTCTL_PORT: String(this.controlPort),
      AGENTCTL_INSTANCE_PORTS: this.instancePorts.join(','),
      AGENTCTL_LOG_LEVEL: 'debug',
      ...this.env,
    };
    if (this.nonce !== null) env['AGENTCTL_BOOTSTRAP_NONCE'] = this.nonce;
    const [program, ...args] = this.command as [string, ...string[]];
    const child = spawn(program, args, { env, stdio: ['ignore', 'ignore', 'pipe'] });
    this.#child = child;
    live.add(this);
    child.stderr?.on('data', (d: Buffer) => (this.stderr += d.toString('utf8')));
    this.#exit = new Promise((r) => child.once('exit', (code) => r(code)));
    for (let i = 0; i < 200; i++) {
      if (child.exitCode !== null) throw new Error(`agentctl exited early (${child.exitCode}): ${this.stderr}`);
      try {
        const res = await fetch(`${this.url}/health`);
        if (res.ok) return;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    throw new Error(`agentctl did not become healthy: ${this.stderr}`);
  }

  /** Sends `signal` and waits for the exit code. */
  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
    const child = this.#child;
    if (child === null || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    process.kill(child.pid as number, signal);
    const code = await this.#exit;
    live.delete(this);
    return code;
  }

  async restart(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    await this.stop(signal);
    await this.#spawn();
  }

  async request<T = unknown>(method: string, path: string, options: { body?: unknown; token?: string; headers?: Record<string, string>; rawBody?: string | Uint8Array } = {}): Promise<JsonResponse<T>> {
    return requestJson<T>(`${this.url}${path}`, method, options);
  }

  async handshake(nonce = this.nonce ?? ''): Promise<string> {
    const res = await this.request<{ token: string }>('POST', '/auth/handshake', { body: { nonce } });
    if (res.status !== 200) throw new Error(`handshake failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.token;
  }
}

export async function requestJson<T = unknown>(
  url: string,
  method: string,
  options: { body?: unknown; token?: string; headers?: Record<string, string>; rawBody?: string | Uint8Array } = {},
): Promise<JsonResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.token !== undefined) headers['authorization'] = `Bearer ${options.token}`;
  let body: string | Uint8Array | undefined = options.rawBody;
  if (options.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(options.body);
  }
  const res = await fetch(url, { method, headers, body });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? null : JSON.parse(text);
  } catch {
    // keep text
  }
  return { status: res.status, body: parsed as T, headers: res.headers };
}

/** Raw HTTP access to one instance server, with the token and X-Instance-ID set. */
export class InstanceApi {
  constructor(
    readonly port: number,
    readonly token: string,
    readonly id: string,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  request<T = unknown>(method: string, path: string, options: { body?: unknown; rawBody?: string | Uint8Array; headers?: Record<string, string> } = {}): Promise<JsonResponse<T>> {
    return requestJson<T>(`${this.url}${path}`, method, { ...options, token: this.token, headers: { 'x-instance-id': this.id, ...options.headers } });
  }
}

/** Creates an instance over the control API and returns its API. */
export async function createInstance(agentctl: AgentctlProcess, token: string, id: string, workspace: string): Promise<InstanceApi> {
  const res = await agentctl.request<{ port: number }>('POST', '/api/v1/instances', { token, body: { id, workspace_path: workspace } });
  if (res.status !== 201 && res.status !== 200) throw new Error(`create instance failed: ${res.status} ${JSON.stringify(res.body)}`);
  return new InstanceApi(res.body.port, token, id);
}

/** Starts an agentctl, completes the handshake and creates instance `id` on `workspace`. */
export async function startWithInstance(id: string, workspace: string): Promise<{ agentctl: AgentctlProcess; token: string; api: InstanceApi }> {
  const agentctl = await AgentctlProcess.start();
  const token = await agentctl.handshake();
  const api = await createInstance(agentctl, token, id, workspace);
  return { agentctl, token, api };
}

/** Sends SIGKILL to each of `pids`, skipping those already gone. */
export function killPids(pids: Iterable<number>): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/** Kills every agentctl this file started (by pid) and removes the given temp dirs. */
export async function cleanup(...dirs: string[]): Promise<void> {
  await Promise.all([...live].map((p) => p.stop('SIGKILL').catch(() => undefined)));
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
}

/** True while a process with `pid` exists (and is not a zombie). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSyncSafe(`/proc/${pid}/stat`);
    return stat === null || !/^\d+ \(.*\) Z/.test(stat);
  } catch {
    return true;
  }
}

function readFileSyncSafe(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** Polls `check` until it returns true (no timing assertions: the test timeout is the bound). */
export async function until(check: () => boolean | Promise<boolean>, intervalMs = 25): Promise<void> {
  while (!(await check())) await sleep(intervalMs);
}

/** Result of a WebSocket dial: the messages until close, or the HTTP status of a refused upgrade. */
export interface StreamResult {
  readonly messages: unknown[];
  readonly closeCode: number | null;
  readonly rejectedStatus: number | null;
}

/** Dials `path` on the instance server and collects every message until the server closes. */
export function collectStream(url: string, headers: Record<string, string>, onOpen?: (ws: WebSocket) => void): Promise<StreamResult> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    const messages: unknown[] = [];
    ws.on('open', () => onOpen?.(ws));
    ws.on('message', (data: Buffer) => messages.push(JSON.parse(data.toString('utf8'))));
    ws.on('unexpected-response', (_req, res) => {
      res.resume();
      resolve({ messages, closeCode: null, rejectedStatus: res.statusCode ?? null });
      ws.terminate();
    });
    ws.on('close', (code) => resolve({ messages, closeCode: code, rejectedStatus: null }));
    ws.on('error', (err) => {
      if (!/Unexpected server response/.test(err.message)) reject(err);
    });
  });
}
