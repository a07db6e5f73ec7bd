/**
 * agentctl on port 0 reports the port it bound over an inherited descriptor (issue 18, item 7):
 * the local executor connects only to the port its own agentctl reports, and instance ports come
 * back in the authenticated createInstance answer.
 * @module
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentctlBaseEnv, spawnAgentctl, stopAgentctl } from '../../../src/executors/local/agentctl-process.js';
import { controlClient } from '../../../src/executors/local/connect.js';
import { listensOn } from '../../../src/executors/local/listener.js';
import { waitForPortReport } from '../../../src/executors/local/report-pipe.js';
import { BUNDLE, cleanup, ensureBuilt, killPids, tempDir, until } from '../support/agentctl.js';

const dirs: string[] = [];
const pids: number[] = [];

beforeAll(ensureBuilt);
afterAll(() => {
  killPids(pids);
  return cleanup(...dirs);
});

function sessionDir(): string {
  const dir = tempDir('agentctl-report-');
  dirs.push(dir);
  mkdirSync(join(dir, 'repo'));
  return dir;
}

async function start(agentctlPath: string) {
  const dir = sessionDir();
  const nonce = randomBytes(32).toString('hex');
  const owner = `${dir}#i1`;
  const proc = await spawnAgentctl({ agentctlPath, sessionDir: dir, nonce, owner, baseEnv: agentctlBaseEnv(process.env), sandbox: null });
  pids.push(proc.pid);
  return { dir, nonce, owner, proc };
}

/** What every descriptor of `pid` points to. */
function openFiles(pid: number): string[] {
  return readdirSync(`/proc/${pid}/fd`).flatMap((fd) => {
    try {
      return [readlinkSync(`/proc/${pid}/fd/${fd}`)];
    } catch {
      return [];
    }
  });
}

describe('agentctl port report', () => {
  it('spawnAgentctl learns the control port from the pipe; that socket and each instance port are agentctl’s own', async () => {
    const { nonce, owner, proc, dir } = await start(BUNDLE);
    const { controlPort } = await waitForPortReport(proc.report, proc.exited, { timeoutMs: 60_000 });
    expect(listensOn(proc.pid, controlPort), 'the reported port is held by the agentctl that was started').toBe(true);

    const control = controlClient(controlPort);
    const token = await control.handshake(nonce);
    const authed = controlClient(controlPort, token);
    const a = await authed.createInstance({ id: 'a', workspace_path: join(dir, 'repo') });
    const b = await authed.createInstance({ id: 'b', workspace_path: join(dir, 'repo') });
    expect(a.port).not.toBe(b.port);
    for (const port of [a.port, b.port]) {
      expect(port).toBeGreaterThan(0);
      expect(listensOn(proc.pid, port), `instance port ${port} is held by agentctl`).toBe(true);
    }
    await stopAgentctl({ pid: proc.pid, procStart: proc.procStart, owner });
  });

  it('listensOn refuses a port another process holds', async () => {
    const { owner, proc } = await start(BUNDLE);
    await waitForPortReport(proc.report, proc.exited, { timeoutMs: 60_000 });
    const other: Server = createServer();
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const port = (other.address() as { port: number }).port;
    expect(listensOn(process.pid, port)).toBe(true);
    expect(listensOn(proc.pid, port)).toBe(false);
    await new Promise((r) => other.close(r));
    await stopAgentctl({ pid: proc.pid, procStart: proc.procStart, owner });
  });

  it('writes exactly one line to the descriptor and closes it: no workspace process inherits it', async () => {
    const dir = sessionDir();
    const reportFile = join(dir, 'report');
    const fd = openSync(reportFile, 'w+', 0o600);
    const nonce = randomBytes(16).toString('hex');
    const child = spawn(process.execPath, [BUNDLE], {
      stdio: ['ignore', 'ignore', 'ignore', fd],
      env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', AGENTCTL_PORT: '0', AGENTCTL_INSTANCE_PORTS: '0', AGENTCTL_REPORT_FD: '3', AGENTCTL_BOOTSTRAP_NONCE: nonce },
    });
    closeSync(fd);
    pids.push(child.pid!);
    const line = await until(() => readFileSync(reportFile, 'utf8').endsWith('\n')).then(() => readFileSync(reportFile, 'utf8'));
    const match = /^\{"control_port":(\d+)\}\n$/.exec(line);
    expect(match, line).not.toBeNull();
    const controlPort = Number(match![1]);
    const token = await controlClient(controlPort).handshake(nonce);
    const info = await controlClient(controlPort, token).createInstance({ id: 'w', workspace_path: join(dir, 'repo') });
    const client = controlClient(controlPort, token).instance(info);
    const listing = await client.startProcess({ command: ['sh', '-c', 'for f in /proc/$$/fd/*; do readlink "$f"; done'] });
    let out = '';
    for await (const msg of client.streamOutput(listing.id)) if (msg.type === 'output') out += Buffer.from(msg.chunk.data, 'base64').toString();
    expect(out).not.toContain(reportFile);
    expect(openFiles(child.pid!)).not.toContain(reportFile);
    child.kill('SIGKILL');
  });

  it('a start that reports garbage, or exits without reporting, fails the wait and says why', async () => {
    const dir = sessionDir();
    const garbage = join(dir, 'garbage.cjs');
    writeFileSync(garbage, "require('fs').writeSync(3, 'HTTP/1.1 200 OK\\n'); setInterval(() => undefined, 1000);\n");
    const g = await start(garbage);
    await expect(waitForPortReport(g.proc.report, g.proc.exited, { timeoutMs: 60_000 })).rejects.toThrow('port report: not a JSON line');
    await stopAgentctl({ pid: g.proc.pid, procStart: g.proc.procStart, owner: g.owner }, 100);

    const quitter = join(dir, 'quitter.cjs');
    writeFileSync(quitter, 'process.exit(3);\n');
    const q = await start(quitter);
    await expect(waitForPortReport(q.proc.report, q.proc.exited, { timeoutMs: 60_000 })).rejects.toThrow('agentctl exited before it answered (exit code 3)');
  });
});
