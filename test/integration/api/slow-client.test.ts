/**
 * Backpressure from a client that stops reading, through `berth serve` to agentctl: an agent that
 * prints like `yes`, a `logs -f` follower, an exec of `yes` and a shell running `yes`, whose
 * sockets are never read. The real built CLI, the local executor and agentctl; serve's memory is
 * read from /proc.
 */
import type { ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { discoverServer } from '../../../src/server/data-dir.js';
import { ensureBuilt, makeRepo, runCli, startServeProcess, stopProcess, tempDir } from '../cli/helpers.js';

/** serve's resident memory may not pass this while the clients stall (it idles at ~100 MB). */
const RSS_BOUND_MB = 300;
const SAMPLES = 120;
const SAMPLE_EVERY_MS = 500;

describe('berth serve with clients that stop reading', () => {
  let root: string;
  let dataDir: string;
  let serve: ChildProcess | undefined;
  let port: number;
  let token: string;
  let id = '';
  const sockets: Socket[] = [];

  beforeAll(async () => {
    ensureBuilt();
    root = tempDir('berth-slow-client-');
    dataDir = join(root, 'data');
    const repo = join(root, 'repo');
    makeRepo(repo);
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'berth.yaml'), 'agents:\n  yes:\n    command: ["sh", "-c", "yes 0123456789abcdef"]\n');
    const started = await startServeProcess(dataDir);
    serve = started.child;
    port = started.port;
    token = discoverServer(dataDir)?.token ?? '';
    const launch = await runCli(['launch', '--repo', repo, '--agent', 'yes', '--name', 'flood', '--prompt', 'go'], { dataDir });
    expect(launch.code, launch.stderr).toBe(0);
    id = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
    expect(id, launch.stdout).not.toBe('');
  }, 120_000);

  afterAll(async () => {
    for (const s of sockets) s.destroy();
    if (id) await runCli(['rm', '--force', id], { dataDir });
    await stopProcess(serve);
    rmSync(root, { recursive: true, force: true });
  });

  /** Sends a raw HTTP request and never reads the answer (the socket stays paused). */
  async function stalledRequest(method: string, path: string, body?: string, extra: string[] = []): Promise<void> {
    const sock = connect(port, '127.0.0.1');
    sock.on('error', () => undefined);
    sockets.push(sock);
    await once(sock, 'connect');
    sock.pause();
    const head = [`${method} ${path} HTTP/1.1`, `Host: 127.0.0.1:${port}`, `Authorization: Bearer ${token}`, ...extra];
    if (body !== undefined) head.push('Content-Type: application/json', `Content-Length: ${Buffer.byteLength(body)}`);
    sock.write(`${head.join('\r\n')}\r\n\r\n${body ?? ''}`);
  }

  /** A shell WebSocket (manual handshake) that runs `yes` and is never read. */
  async function stalledShell(): Promise<void> {
    const key = Buffer.from('berth-slow-shell!').subarray(0, 16).toString('base64');
    await stalledRequest('GET', `/api/v1/sessions/${id}/shell`, undefined, ['Upgrade: websocket', 'Connection: Upgrade', `Sec-WebSocket-Key: ${key}`, 'Sec-WebSocket-Version: 13']);
    const payload = Buffer.from(JSON.stringify({ type: 'stdin', data: Buffer.from('exec yes shell-flood-0123456789\n').toString('base64') }));
    const mask = Buffer.from([1, 2, 3, 4]);
    const masked = payload.map((b, i) => b ^ (mask[i % 4] ?? 0));
    sockets.at(-1)?.write(Buffer.concat([Buffer.from([0x81, 0x80 | payload.length]), mask, masked]));
  }

  const rssMb = (): number => {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${serve?.pid}/status`, 'utf8'));
    return Number(m?.[1] ?? 0) / 1024;
  };

  it(`keeps serve under ${RSS_BOUND_MB} MB while a logs -f follower of a yes-like agent, an exec of yes and a shell running yes read nothing`, async () => {
    await stalledRequest('GET', `/api/v1/sessions/${id}/logs?follow=true`);
    await stalledRequest('POST', `/api/v1/sessions/${id}/exec`, JSON.stringify({ argv: ['yes', 'exec-flood-0123456789'] }));
    await stalledShell();
    let peak = 0;
    for (let i = 0; i < SAMPLES && peak <= RSS_BOUND_MB; i++) {
      await new Promise((r) => setTimeout(r, SAMPLE_EVERY_MS));
      expect(serve?.exitCode, 'serve is still running').toBeNull();
      peak = Math.max(peak, rssMb());
    }
    expect(peak, `serve's peak RSS in MB over ${(SAMPLES * SAMPLE_EVERY_MS) / 1000} s`).toBeLessThan(RSS_BOUND_MB);
    // Both were answered and streaming (what sits unread in their sockets): the bound held under load.
    const [logs, exec, shell] = sockets.map((sock) => String(sock.read() ?? ''));
    expect(logs).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\{"type":"output"/);
    expect(exec).toMatch(/^HTTP\/1\.1 200 OK\r\n[^]*\{"type":"output"/);
    expect(shell).toMatch(/^HTTP\/1\.1 101 Switching Protocols\r\n[^]*\{"type":"output"/);
    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);
  }, 120_000);
});
