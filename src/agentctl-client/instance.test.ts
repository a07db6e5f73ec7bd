import { afterEach, describe, expect, it } from 'vitest';
import { closeServers, json, reset, serve } from '../../test/support/loopback-server.js';
import { ControlClient } from './control.js';
import { isSpawnFailedError } from './errors.js';
import { InstanceClient } from './instance.js';

const TOKEN = 'c'.repeat(64);
const FAST = { attempts: 3, initialDelayMs: 1, maxDelayMs: 5 };

afterEach(closeServers);

const processInfo = {
  id: 'p1',
  kind: 'process',
  command: ['true'],
  cwd: '.',
  status: 'running',
  pid: 10,
  exit_code: null,
  signal: null,
  started_at: '2026-01-01T00:00:00Z',
  ended_at: null,
  next_seq: 0,
  orphaned: false,
};

const chunk = (seq: number) => ({ seq, stream: 'stdout', data: btoa(`${seq}`), at: '2026-01-01T00:00:00Z' });

function client(url: string): InstanceClient {
  return new InstanceClient({ baseUrl: url, token: TOKEN, instanceId: 'task-1', retry: FAST });
}

describe('InstanceClient', () => {
  it('sends the bearer token and the instance id', async () => {
    const { url, seen } = await serve(json(200, { processes: [processInfo] }));
    expect(await client(url).listProcesses()).toEqual([processInfo]);
    expect(seen[0]?.headers).toMatchObject({ authorization: `Bearer ${TOKEN}`, 'x-instance-id': 'task-1' });
    expect(seen[0]?.url).toBe('/api/v1/processes');
  });

  it('reads the current token of its control client', async () => {
    const { url, seen } = await serve(json(200, { status: 'ok', version: '1' }));
    const control = new ControlClient({ baseUrl: 'http://127.0.0.1:1', token: 'old-token' });
    const inst = control.instance({ id: 'task-1', port: 1 }, { baseUrl: url });
    control.setToken('new-token');
    await inst.health();
    expect(seen[0]?.headers.authorization).toBe('Bearer new-token');
  });

  it.each(['', 'has space', '../x'])('rejects instance id %j', (instanceId) => {
    expect(() => new InstanceClient({ baseUrl: 'http://127.0.0.1:1', token: TOKEN, instanceId })).toThrow(TypeError);
  });

  it('retries startProcess only when the caller chose the id', async () => {
    const withId = await serve(reset, json(201, processInfo));
    expect(await client(withId.url).startProcess({ command: ['true'], id: 'p1' })).toEqual(processInfo);
    expect(withId.seen).toHaveLength(2);

    const withoutId = await serve(reset, json(201, processInfo));
    await expect(client(withoutId.url).startProcess({ command: ['true'] })).rejects.toMatchObject({
      name: 'AgentctlUnreachableError',
      mayHaveBeenApplied: true,
    });
    expect(withoutId.seen).toHaveLength(1);
  });

  it('exposes a spawn failure typed, with its errno, and does not retry it', async () => {
    const body = { error: { code: 'spawn_failed', message: 'cannot start nope: ENOENT', errno: 'ENOENT' } };
    const { url, seen } = await serve(json(400, body));
    const err: unknown = await client(url).startProcess({ command: ['nope'], id: 'p1' }).catch((e: unknown) => e);
    expect(isSpawnFailedError(err)).toBe(true);
    expect(err).toMatchObject({ name: 'AgentctlHttpError', status: 400, code: 'spawn_failed', errno: 'ENOENT', mayHaveBeenApplied: false });
    expect(seen).toHaveLength(1);
  });

  it('does not take other 400s for spawn failures', async () => {
    const { url } = await serve(json(400, { error: { code: 'bad_request', message: 'command: must not be empty' } }));
    const err: unknown = await client(url).startProcess({ command: [] }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'bad_request', errno: undefined });
    expect(isSpawnFailedError(err)).toBe(false);
  });

  it.each([
    ['writeStdin', (c: InstanceClient) => c.writeStdin('p1', 'hi', { eof: true })],
    ['signal', (c: InstanceClient) => c.signal('p1', 'SIGTERM')],
    ['git.commit', (c: InstanceClient) => c.git.commit({ message: 'm' })],
  ])('never retries %s', async (_name, call) => {
    const { url, seen } = await serve(reset);
    await expect(call(client(url))).rejects.toMatchObject({ mayHaveBeenApplied: true });
    expect(seen).toHaveLength(1);
  });

  it('encodes stdin bytes as base64 and text as utf8', async () => {
    const { url, seen } = await serve((_req, res) => res.writeHead(204).end());
    await client(url).writeStdin('p1', new Uint8Array([0, 255]));
    await client(url).writeStdin('p1', 'é', { eof: true });
    expect(JSON.parse(seen[0]?.body ?? '')).toEqual({ data: 'AP8=', encoding: 'base64', eof: false });
    expect(JSON.parse(seen[1]?.body ?? '')).toEqual({ data: 'é', encoding: 'utf8', eof: true });
    expect(seen[1]?.url).toBe('/api/v1/processes/p1/stdin');
  });

  it('reads every page of output until the process is complete', async () => {
    const { url, seen } = await serve(
      json(200, { chunks: [chunk(2), chunk(3)], next: 4, first_available: 2, complete: false }),
      json(200, { chunks: [chunk(4)], next: 5, first_available: 2, complete: true }),
    );
    const all = await client(url).readAllOutput('p1');
    expect(all).toMatchObject({ next: 5, complete: true, firstAvailable: 2 });
    expect(all.chunks.map((c) => c.seq)).toEqual([2, 3, 4]);
    expect(seen.map((s) => s.url)).toEqual([
      '/api/v1/processes/p1/output?from=0&limit=1000',
      '/api/v1/processes/p1/output?from=4&limit=1000',
    ]);
  });

  it('stops reading output of a running process when no new chunks arrive', async () => {
    const { url } = await serve(json(200, { chunks: [], next: 0, first_available: 0, complete: false }));
    expect(await client(url).readAllOutput('p1')).toEqual({ chunks: [], next: 0, complete: false, firstAvailable: 0 });
  });
});

describe('InstanceClient files and git', () => {
  it('returns file bytes and text', async () => {
    const content = { path: 'a.bin', size: 3, encoding: 'base64', content: btoa('h\u00e9') };
    const { url, seen } = await serve(json(200, { ...content, content: 'AGj/' }), json(200, content));
    expect(await client(url).files.readFile('a.bin')).toEqual(new Uint8Array([0, 0x68, 0xff]));
    expect(seen[0]?.url).toBe('/api/v1/files/content?path=a.bin');
    const text = await serve(json(200, { path: 'a.txt', size: 3, encoding: 'base64', content: 'aMOp' }));
    expect(await client(text.url).files.readTextFile('a.txt')).toBe('hé');
  });

  it('writes bytes as base64 with PUT and retries it', async () => {
    const { url, seen } = await serve(reset, json(200, { path: 'a.bin', size: 2 }));
    expect(await client(url).files.writeFile('a.bin', new Uint8Array([1, 2]), { mode: 0o600 })).toEqual({
      path: 'a.bin',
      size: 2,
    });
    expect(seen).toHaveLength(2);
    expect(seen[1]?.method).toBe('PUT');
    expect(JSON.parse(seen[1]?.body ?? '')).toEqual({ path: 'a.bin', content: 'AQI=', encoding: 'base64', mode: 0o600 });
  });

  it('builds the tree, delete, diff and log queries', async () => {
    const { url, seen } = await serve(
      json(200, { entries: [], truncated: false }),
      (_req, res) => res.writeHead(204).end(),
      json(200, { base: 'HEAD', diff: '', truncated: false }),
      json(200, { commits: [] }),
    );
    const c = client(url);
    await c.files.tree({ path: 'src', depth: 2 });
    await c.files.deleteFile('dir', { recursive: true });
    await c.git.diff({ base: 'HEAD', path: 'src' });
    await c.git.log({ limit: 5 });
    expect(seen.map((s) => `${s.method} ${s.url}`)).toEqual([
      'GET /api/v1/files/tree?path=src&depth=2',
      'DELETE /api/v1/files/content?path=dir&recursive=true',
      'GET /api/v1/git/diff?base=HEAD&path=src',
      'GET /api/v1/git/log?limit=5',
    ]);
  });
});
