/**
 * agentctl's V8 code cache, used by its start-up loader (src/agentctl/loader.ts, built to
 * dist/agentctl-loader.cjs):
 *
 *   node agentctl-loader.cjs <bundle> [agentctl args…]     runs the bundle, from its cache if valid
 *   node agentctl-loader.cjs --write-code-cache <bundle>   starts the bundle once, serves one
 *                                                          /health and one session's first requests,
 *                                                          then writes <bundle>.v8cache
 *
 * Compiling the 1.1 MB bundle and the functions its start-up runs is a third of agentctl's start;
 * a code cache made after a real start skips both. Node 20 has no `module.enableCompileCache`, so the
 * cache is kept by hand: `<bundle>.v8cache` holds a header naming the bundle's SHA-256 and the Node
 * version, then V8's data. V8 itself checks only the source length and its own version, so the
 * header's digest is what stops a cache of another bundle of the same length from being used. A
 * cache that does not match, or that V8 rejects, is ignored: the bundle is compiled as usual.
 *
 * The cache is written only by the build (beside the bundle, with the bundle's trust); agentctl never
 * writes it while serving a session, so nothing a workspace process can write is ever loaded as code.
 * No dependencies: the loader is bundled on its own.
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { get, request } from 'node:http';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Script } from 'node:vm';
import { ENV, HEADER } from '../protocol/constants.js';
import { controlRoutes, instanceRoutes } from '../protocol/routes.js';

const MAGIC = 'berth-v8cache 1';
export const WRITE_FLAG = '--write-code-cache';
export const LOADER_FILE = 'agentctl-loader.cjs';

export const codeCachePath = (bundle: string): string => `${bundle}.v8cache`;

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

function header(digest: string): string {
  return `${MAGIC} ${digest} ${process.version}\n`;
}

/** V8's data from `path` when its header names this source and this Node; otherwise undefined. */
export function readCodeCache(path: string, digest: string): Buffer | undefined {
  let raw: Buffer;
  try {
    raw = readFileSync(path);
  } catch {
    return undefined;
  }
  const expected = Buffer.from(header(digest));
  if (raw.length <= expected.length || !raw.subarray(0, expected.length).equals(expected)) return undefined;
  return raw.subarray(expected.length);
}

/** The bundle compiled as a CommonJS module body (its shebang kept as a comment: same line numbers). */
export function compile(bundle: string, source: string, cachedData: Buffer | undefined): Script {
  const body = source.startsWith('#!') ? `//${source.slice(2)}` : source;
  const wrapped = `(function (exports, require, module, __filename, __dirname) {${body}\n})`;
  return new Script(wrapped, { filename: bundle, ...(cachedData ? { cachedData } : {}) });
}

/** Runs the compiled bundle as the main module, with `args` as its command line. */
export function run(script: Script, bundle: string, args: string[]): void {
  process.argv = [process.argv[0]!, bundle, ...args];
  const module = { exports: {} as unknown, filename: bundle, id: '.', loaded: false };
  const fn = script.runInThisContext() as (e: unknown, r: NodeRequire, m: unknown, f: string, d: string) => void;
  fn.call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

function healthy(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const req = get({ host: '127.0.0.1', port, path: controlRoutes.health, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

/** One JSON request to the bundle on loopback; resolves with the status and the parsed body (null when none). */
function call(port: number, method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: unknown }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request(
      { host: '127.0.0.1', port, method, path, timeout: 5000, headers: { ...headers, ...(data ? { 'content-type': 'application/json', 'content-length': String(data.length) } : {}) } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          try {
            resolve({ status: res.statusCode ?? 0, json: text === '' ? null : (JSON.parse(text) as unknown) });
          } catch (err) {
            reject(err as Error);
          }
        });
      },
    );
    req.on('error', reject);
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer within 5 s`)));
    req.end(data);
  });
}

/**
 * What a session does right after agentctl starts, done once against the bundle so that the code
 * cache holds those functions compiled too (V8 caches every function compiled by the time the cache
 * is made): the nonce handshake, an instance with its health, an agent process started and listed
 * after it exited. Without it each of those requests compiles its code on first use, in the Pod
 * while the clone runs beside it. Best effort: the cache is written whatever this reaches.
 */
async function exerciseSession(port: number, nonce: string, workspace: string): Promise<void> {
  const handshake = await call(port, 'POST', controlRoutes.handshake, { nonce });
  const token = (handshake.json as { token?: unknown } | null)?.token;
  if (typeof token !== 'string') throw new Error(`handshake answered ${handshake.status}`);
  const auth = { authorization: `Bearer ${token}` };
  const id = 'code-cache';
  const created = await call(port, 'POST', controlRoutes.instances, { id, workspace_path: workspace, env: {}, labels: {} }, auth);
  const instancePort = (created.json as { port?: unknown } | null)?.port;
  if (typeof instancePort !== 'number') throw new Error(`instance create answered ${created.status}`);
  const headers = { ...auth, [HEADER.instanceId]: id };
  await call(instancePort, 'GET', instanceRoutes.health, undefined, headers);
  await call(instancePort, 'POST', instanceRoutes.processes, { id: 'agent-1', kind: 'agent', command: [process.execPath, '-e', '0'] }, headers);
  for (let i = 0; i < 200; i++) {
    const list = await call(instancePort, 'GET', instanceRoutes.processes, undefined, headers);
    const processes = (list.json as { processes?: Array<{ status?: unknown }> } | null)?.processes ?? [];
    if (processes.every((p) => p.status === 'exited')) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  await call(instancePort, 'GET', `${instanceRoutes.processOutput('agent-1')}?from=0`, undefined, headers);
}

/** Starts the bundle on a free port in a scratch directory, waits for one healthy answer, writes the cache. */
export async function writeCodeCache(bundle: string): Promise<void> {
  const source = readFileSync(bundle, 'utf8');
  const digest = sha256(source);
  const script = compile(bundle, source, undefined);
  const scratch = mkdtempSync(join(tmpdir(), 'agentctl-cache-'));
  const port = await freePort();
  let instancePort = await freePort();
  while (instancePort === port) instancePort = await freePort();
  const nonce = randomBytes(16).toString('hex');
  const workspace = join(scratch, 'workspace');
  mkdirSync(workspace);
  Object.assign(process.env, {
    [ENV.controlPort]: String(port),
    [ENV.instancePorts]: String(instancePort),
    [ENV.logLevel]: 'silent',
    [ENV.stateDir]: join(scratch, 'state'),
    [ENV.bootstrapNonce]: nonce,
  });
  process.chdir(scratch);
  const fail = (message: string): never => {
    rmSync(scratch, { recursive: true, force: true });
    process.stderr.write(`agentctl-loader: ${message}\n`);
    process.exit(1);
  };
  run(script, bundle, []);
  const deadline = Date.now() + 15_000;
  while (!(await healthy(port))) {
    if (Date.now() > deadline) fail(`the bundle did not answer /health on port ${port} within 15 s; no cache written`);
    await new Promise((r) => setTimeout(r, 10));
  }
  await exerciseSession(port, nonce, workspace).catch((err: unknown) => {
    process.stderr.write(`agentctl-loader: the cache covers agentctl's start only (the session requests failed: ${err instanceof Error ? err.message : String(err)})\n`);
  });
  const out = codeCachePath(bundle);
  const tmp = `${out}.${process.pid}.tmp`;
  writeFileSync(tmp, Buffer.concat([Buffer.from(header(digest)), script.createCachedData()]), { mode: 0o644 });
  renameSync(tmp, out);
  rmSync(scratch, { recursive: true, force: true });
  process.exit(0);
}
