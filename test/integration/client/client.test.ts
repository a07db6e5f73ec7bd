/**
 * The typed client against the real agentctl bundle (dist/agentctl.cjs, built when stale).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import type { StreamMessage } from '../../../src/protocol/index.js';
import {
  AgentctlHttpError,
  AgentctlUnreachableError,
  ControlClient,
  InstanceClient,
  outputText,
} from '../../../src/agentctl-client/index.js';
import type { WebSocketFactory, WebSocketLike } from '../../../src/agentctl-client/index.js';
import { AGENTCTL_FEATURES } from '../../../src/protocol/index.js';
import { AgentctlProcess, cleanup, tempDir } from '../support/agentctl.js';

const dirs: string[] = [];

function killGroup(pid: number): void {
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
afterAll(() => cleanup(...dirs));

function workspace(): string {
  const dir = tempDir('berth-client-it-');
  dirs.push(dir);
  return dir;
}

async function collect(iterable: AsyncIterable<StreamMessage>): Promise<StreamMessage[]> {
  const out: StreamMessage[] = [];
  for await (const m of iterable) out.push(m);
  return out;
}

const chunksOf = (messages: StreamMessage[]) => messages.flatMap((m) => (m.type === 'output' ? [m.chunk] : []));

/** A started agentctl, a handshaken control client and one instance on a fresh workspace. */
async function setup(id = 'task-1'): Promise<{
  agentctl: AgentctlProcess;
  control: ControlClient;
  inst: InstanceClient;
  ws: string;
}> {
  const agentctl = await AgentctlProcess.start();
  const control = new ControlClient({ baseUrl: agentctl.url });
  await control.handshake(agentctl.nonce ?? '');
  const ws = workspace();
  const info = await control.createInstance({ id, workspace_path: ws, labels: { session: 's1' } });
  return { agentctl, control, inst: control.instance(info), ws };
}

describe('ControlClient against agentctl', () => {
  it('handshakes once, keeps the token and reports typed errors without the nonce or token', async () => {
    const agentctl = await AgentctlProcess.start();
    const nonce = agentctl.nonce ?? '';
    const control = new ControlClient({ baseUrl: agentctl.url });
    expect(await control.health()).toEqual({ status: 'ok', version: expect.any(String), features: [AGENTCTL_FEATURES.instanceApiOnControl] });

    const token = await control.handshake(nonce);
    expect(token).toMatch(/^[0-9a-f]{64}$/);
    expect(await control.listInstances()).toEqual([]);

    const replay = await control.handshake(nonce).catch((e: unknown) => e);
    expect(replay).toBeInstanceOf(AgentctlHttpError);
    expect(replay).toMatchObject({ status: 403, code: 'forbidden', mayHaveBeenApplied: false });
    expect((replay as Error).message).not.toContain(nonce);

    const stranger = new ControlClient({ baseUrl: agentctl.url, token: 'e'.repeat(64) });
    const unauthorized = await stranger.listInstances().catch((e: unknown) => e);
    expect(unauthorized).toMatchObject({ name: 'AgentctlHttpError', status: 401, code: 'unauthorized' });
    expect((unauthorized as Error).message).not.toContain('e'.repeat(64));
  });

  it('creates, re-creates idempotently, conflicts, gets, lists and deletes instances', async () => {
    const agentctl = await AgentctlProcess.start();
    const control = new ControlClient({ baseUrl: agentctl.url });
    await control.handshake(agentctl.nonce ?? '');
    const ws = workspace();

    const info = await control.createInstance({ id: 'task-1', workspace_path: ws, labels: { session: 's1' } });
    expect(info).toMatchObject({ id: 'task-1', workspace_path: ws, status: 'running', labels: { session: 's1' } });
    expect(agentctl.instancePorts).toContain(info.port);
    expect(await control.createInstance({ id: 'task-1', workspace_path: ws })).toMatchObject({ port: info.port });

    const conflict = await control.createInstance({ id: 'task-1', workspace_path: workspace() }).catch((e: unknown) => e);
    expect(conflict).toMatchObject({ name: 'AgentctlHttpError', status: 409, code: 'conflict', mayHaveBeenApplied: false });

    expect(await control.getInstance('task-1')).toEqual(info);
    expect(await control.listInstances()).toEqual([info]);
    const missing = await control.getInstance('nope').catch((e: unknown) => e);
    expect(missing).toMatchObject({ status: 404, code: 'not_found' });

    await control.deleteInstance('task-1');
    await expect(control.getInstance('task-1')).rejects.toMatchObject({ status: 404 });
  });
});

describe('InstanceClient against agentctl', () => {
  it('starts a process, streams its output to exit and reads the same output back', async () => {
    const { inst } = await setup();
    expect(await inst.health()).toMatchObject({ status: 'ok' });
    const proc = await inst.startProcess({
      id: 'greet',
      command: ['sh', '-c', 'for i in 1 2 3; do echo "out $i"; done; echo oops >&2; exit 3'],
    });
    expect(proc).toMatchObject({ id: 'greet', status: 'running' });
    // Same id, same command: the daemon returns the same process.
    expect(await inst.startProcess({ id: 'greet', command: proc.command })).toMatchObject({ id: 'greet' });

    const messages = await collect(inst.streamOutput('greet'));
    const last = messages.at(-1);
    expect(last).toMatchObject({ type: 'exit', exit_code: 3 });
    const chunks = chunksOf(messages);
    expect(chunks.map((c) => c.seq)).toEqual(chunks.map((_c, i) => i));
    expect(outputText(chunks, 'stdout')).toBe('out 1\nout 2\nout 3\n');
    expect(outputText(chunks, 'stderr')).toBe('oops\n');

    const all = await inst.readAllOutput('greet');
    expect(all).toMatchObject({ complete: true, next: chunks.length, firstAvailable: 0 });
    expect(all.chunks).toEqual(chunks);
    expect(await inst.getProcess('greet')).toMatchObject({ status: 'exited', exit_code: 3 });
    expect((await inst.listProcesses()).map((p) => p.id)).toEqual(['greet']);
  });

  it('writes stdin and signals a process', async () => {
    const { inst } = await setup();
    await inst.startProcess({ id: 'cat', command: ['cat'] });
    await inst.writeStdin('cat', 'hello ');
    await inst.writeStdin('cat', new TextEncoder().encode('bytes\n'), { eof: true });
    const catOut = await collect(inst.streamOutput('cat'));
    expect(outputText(chunksOf(catOut))).toBe('hello bytes\n');
    expect(catOut.at(-1)).toMatchObject({ type: 'exit', exit_code: 0 });

    await inst.startProcess({ id: 'sleeper', command: ['sleep', '60'] });
    await inst.signal('sleeper', 'SIGTERM');
    const sleeperOut = await collect(inst.streamOutput('sleeper'));
    expect(sleeperOut.at(-1)).toMatchObject({ type: 'exit', signal: 'SIGTERM' });

    const exited = await inst.writeStdin('cat', 'late').catch((e: unknown) => e);
    expect(exited).toMatchObject({ name: 'AgentctlHttpError', status: 409, code: 'conflict', mayHaveBeenApplied: false });
    await expect(inst.getProcess('nope')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await expect(collect(inst.streamOutput('nope')), 'a refused dial is explained by the probe').rejects.toMatchObject({
      name: 'AgentctlHttpError',
      status: 404,
    });
  });

  it('refuses a client with the wrong token (401) or instance id (403)', async () => {
    const { inst, control } = await setup();
    const wrongToken = new InstanceClient({ baseUrl: inst.baseUrl, token: 'e'.repeat(64), instanceId: inst.instanceId });
    const unauthorized = await wrongToken.health().catch((e: unknown) => e);
    expect(unauthorized).toMatchObject({ name: 'AgentctlHttpError', status: 401, code: 'unauthorized' });
    expect((unauthorized as Error).message).not.toContain('e'.repeat(64));

    // Right token, but the port belongs to another instance (a recycled port).
    const wrongId = control.instance({ id: 'other', port: Number(new URL(inst.baseUrl).port) });
    await expect(wrongId.health()).rejects.toMatchObject({ status: 403, code: 'forbidden' });
  });

  it('round-trips files and reports typed file errors', async () => {
    const { inst, ws } = await setup();
    const bytes = new Uint8Array([0, 1, 2, 250, 255]);
    expect(await inst.files.writeFile('bin/data.bin', bytes, { mode: 0o600 })).toMatchObject({ path: 'bin/data.bin', size: 5 });
    expect(await inst.files.readFile('bin/data.bin')).toEqual(bytes);
    await inst.files.writeFile('notes.txt', 'héllo\n');
    expect(await inst.files.readTextFile('notes.txt')).toBe('héllo\n');

    const tree = await inst.files.tree({ depth: 2 });
    expect(tree.entries.map((e) => `${e.type} ${e.path}`)).toEqual(
      expect.arrayContaining(['dir bin', 'file bin/data.bin', 'file notes.txt']),
    );

    const escape = await inst.files.readFile('../outside').catch((e: unknown) => e);
    expect(escape).toMatchObject({ name: 'AgentctlHttpError', status: 400, code: 'path_escape' });
    expect((escape as Error).message).not.toContain(ws);

    await inst.files.deleteFile('notes.txt');
    await expect(inst.files.readFile('notes.txt')).rejects.toMatchObject({ status: 404, code: 'not_found' });
    await inst.files.deleteFile('bin', { recursive: true });
    expect((await inst.files.tree()).entries.map((e) => e.path)).not.toContain('bin');
  });

  it('reads git status, diff and log and commits', async () => {
    const { inst, ws } = await setup();
    const git = (...args: string[]) => execFileSync('git', args, { cwd: ws, stdio: 'pipe' });
    git('init', '-q', '-b', 'main');
    git('config', 'user.name', 'Berth Test');
    git('config', 'user.email', 'test@berth.invalid');
    mkdirSync(join(ws, 'src'));
    writeFileSync(join(ws, 'src/a.txt'), 'one\n');

    const before = await inst.git.status();
    expect(before).toMatchObject({ branch: 'main', head: null, clean: false });
    expect(before.files).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'untracked' })]));

    const first = await inst.git.commit({ message: 'first', author: { name: 'A', email: 'a@b.c' } });
    expect(first.sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await inst.git.status()).toMatchObject({ head: first.sha, clean: true });

    await inst.files.writeFile('src/a.txt', 'two\n');
    const diff = await inst.git.diff();
    expect(diff.diff).toContain('+two');
    expect((await inst.git.diff({ base: 'HEAD', path: 'src' })).diff).toContain('-one');

    const second = await inst.git.commit({ message: 'second' });
    const log = await inst.git.log({ limit: 5 });
    expect(log.commits.map((c) => [c.sha, c.subject])).toEqual([
      [second.sha, 'second'],
      [first.sha, 'first'],
    ]);

    const empty = await inst.git.commit({ message: 'nothing' }).catch((e: unknown) => e);
    expect(empty).toMatchObject({ name: 'AgentctlHttpError', mayHaveBeenApplied: false });
    expect(['conflict', 'git_error'], 'nothing to commit is a typed 4xx').toContain((empty as AgentctlHttpError).code);
  });
});

describe('InstanceClient.streamOutput across an agentctl restart', () => {
  it('resumes from the last sequence number once the controller re-handshakes and re-creates the instance', async () => {
    const agentctl = await AgentctlProcess.start();
    const dials: string[] = [];
    const webSocket: WebSocketFactory = (url, init) => {
      dials.push(url);
      return new WebSocket(url, { headers: { ...init.headers } }) as unknown as WebSocketLike;
    };
    const control = new ControlClient({ baseUrl: agentctl.url, webSocket });
    await control.handshake(agentctl.nonce ?? '');
    const ws = workspace();
    const info = await control.createInstance({ id: 'task-r', workspace_path: ws });
    // The instance client reads the control client's current token, so the re-handshake reaches it.
    const inst = control.instance(info);
    await inst.startProcess({
      id: 'ticker',
      command: ['sh', '-c', 'i=0; while [ $i -lt 400 ]; do echo "tick $i"; i=$((i+1)); sleep 0.01; done'],
    });

    const stream = inst.streamOutput('ticker', { reconnect: { attempts: 100, initialDelayMs: 50, maxDelayMs: 200 } });
    const messages: StreamMessage[] = [];
    let restarted = false;
    for await (const m of stream) {
      messages.push(m);
      if (!restarted && chunksOf(messages).length >= 20) {
        restarted = true;
        // The consumer pauses while agentctl dies and comes back: output it had not read yet is
        // only in agentctl's log, and must come from the resumed stream.
        await new Promise((r) => setTimeout(r, 100));
        await agentctl.restart('SIGKILL');
        await control.handshake(agentctl.nonce ?? '');
        const again = await control.createInstance({ id: 'task-r', workspace_path: ws });
        expect(again.port, 'the first free port is handed out again').toBe(info.port);
      }
    }

    const chunks = chunksOf(messages);
    expect(dials.length, 'the stream re-dialed').toBeGreaterThanOrEqual(2);
    expect(Number(new URL(dials.at(-1) ?? '').searchParams.get('from'))).toBeGreaterThan(20);
    expect(chunks.map((c) => c.seq), 'no duplicates, no holes').toEqual(chunks.map((_c, i) => i));
    // The old process died with the old agentctl: it is recorded as orphaned with an unknown exit.
    expect(messages.at(-1)).toMatchObject({ type: 'exit', exit_code: null });
    expect(stream.position).toBe(chunks.length);
    const persisted = await inst.readAllOutput('ticker');
    expect(persisted.chunks, 'the stream saw exactly what agentctl recorded').toEqual(chunks);
    expect(await inst.getProcess('ticker')).toMatchObject({ orphaned: true, status: 'exited' });
  });

  it('gives up with AgentctlUnreachableError when agentctl stays down', async () => {
    const agentctl = await AgentctlProcess.start();
    const control = new ControlClient({ baseUrl: agentctl.url });
    await control.handshake(agentctl.nonce ?? '');
    const info = await control.createInstance({ id: 'task-d', workspace_path: workspace() });
    const inst = control.instance(info);
    const { pid } = await inst.startProcess({ id: 'long', command: ['sh', '-c', 'echo start; sleep 60'] });
    const stream = inst.streamOutput('long', { reconnect: { attempts: 3, initialDelayMs: 10, maxDelayMs: 20 } });
    try {
      const err = await (async () => {
        for await (const m of stream) {
          if (m.type === 'output') await agentctl.stop('SIGKILL');
        }
      })().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AgentctlUnreachableError);
      expect(stream.position).toBe(1);
    } finally {
      // A SIGKILLed agentctl cannot stop its children: end the process group it started.
      if (pid !== null) killGroup(pid);
    }
  });
});
