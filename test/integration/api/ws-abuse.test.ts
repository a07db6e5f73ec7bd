/**
 * `berth serve` (the real built CLI, the local executor, agentctl and the demo agent) against
 * hostile WebSocket traffic on the shell route: an oversized frame, a frame with a reserved
 * opcode and refused upgrades whose peer resets at once. Each must end only its own connection.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { discoverServer } from '../../../src/server/data-dir.js';
import { clientForDataDir } from '../../../src/server/node-client.js';
import { ensureBuilt, makeRepo, runCli, startServeProcess, stopProcess, tempDir } from '../cli/helpers.js';

const ROUNDS = 200;

describe('berth serve under malformed and oversized WebSocket frames', () => {
  let root: string;
  let dataDir: string;
  let serve: ChildProcess | undefined;
  let port: number;
  let token: string;
  let id: string;
  let serveOutput: () => string;

  beforeAll(async () => {
    ensureBuilt();
    root = tempDir('berth-ws-abuse-');
    dataDir = join(root, 'data');
    const repo = join(root, 'repo');
    makeRepo(repo);
    const started = await startServeProcess(dataDir);
    serve = started.child;
    port = started.port;
    serveOutput = started.output;
    token = discoverServer(dataDir)?.token ?? '';
    const launch = await runCli(['launch', '--repo', repo, '--agent', 'demo', '--name', 'abuse', '--prompt', 'hi', '--env', 'BERTH_DEMO_STEP_MS=0'], { dataDir });
    expect(launch.code, launch.stderr).toBe(0);
    id = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
    expect(id, launch.stdout).not.toBe('');
  }, 120_000);

  afterAll(async () => {
    if (id) await runCli(['rm', '--force', id], { dataDir });
    await stopProcess(serve);
    rmSync(root, { recursive: true, force: true });
  });

  const upgradeRequest = (auth: string): string =>
    [
      `GET /api/v1/sessions/${id}/shell HTTP/1.1`,
      `Host: 127.0.0.1:${port}`,
      'Upgrade: websocket',
      'Connection: Upgrade',
      `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
      'Sec-WebSocket-Version: 13',
      `Authorization: Bearer ${auth}`,
      '',
      '',
    ].join('\r\n');

  /** An authenticated shell socket that sends one 2 MiB text frame; resolves with the close code. */
  async function oversizedFrame(): Promise<number> {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/api/v1/sessions/${id}/shell`, { headers: { authorization: `Bearer ${token}` } });
    ws.on('error', () => undefined); // the server may stop reading while the frame is still going out
    await once(ws, 'open');
    ws.send('x'.repeat(2 << 20));
    const [code] = (await once(ws, 'close')) as [number];
    return code;
  }

  /** A manual handshake, then a masked frame with the reserved opcode 0x3; resolves with the code of the server's close frame. */
  async function badOpcode(): Promise<number | string | null> {
    const sock = connect(port, '127.0.0.1');
    sock.on('error', () => undefined);
    await once(sock, 'connect');
    sock.write(upgradeRequest(token));
    let buf = Buffer.alloc(0);
    let head: string | undefined;
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (head === undefined && end >= 0) {
        head = buf.subarray(0, end).toString('latin1');
        buf = buf.subarray(end + 4);
        if (head.startsWith('HTTP/1.1 101')) sock.write(Buffer.from([0x83, 0x80, 1, 2, 3, 4])); // FIN, opcode 3, masked, empty payload
        else sock.destroy();
      }
    });
    await once(sock, 'close');
    return head?.startsWith('HTTP/1.1 101') ? closeCode(buf) : `refused: ${head ?? 'nothing'}`;
  }

  /** An upgrade with a wrong token whose peer resets the connection right after sending it. */
  async function resetRefusedUpgrade(): Promise<void> {
    const sock: Socket = connect(port, '127.0.0.1');
    sock.on('error', () => undefined);
    await once(sock, 'connect');
    sock.write(upgradeRequest('not-the-token'));
    sock.resetAndDestroy();
    await once(sock, 'close');
  }

  it(`closes only the offending connection (1009, 1002), ${ROUNDS} times over, and keeps serving the session's shell`, async () => {
    const codes = new Map<string, number>();
    const count = (what: string): void => void codes.set(what, (codes.get(what) ?? 0) + 1);
    for (let i = 0; i < ROUNDS; i++) {
      const [big, bad] = await Promise.all([oversizedFrame(), badOpcode(), resetRefusedUpgrade()]).catch(async (err: unknown) => {
        await new Promise((r) => setTimeout(r, 200)); // let a dying serve finish its last words
        throw new Error(`round ${i}: ${String(err)}; serve exit code ${serve?.exitCode}, its output ends with:\n${serveOutput().slice(-800)}`);
      });
      count(`oversized:${big}`);
      count(`opcode:${bad}`);
      expect(serve?.exitCode, `serve exited in round ${i}`).toBeNull();
    }
    expect(Object.fromEntries(codes)).toEqual({ 'oversized:1009': ROUNDS, 'opcode:1002': ROUNDS });

    const health = await fetch(`http://127.0.0.1:${port}/health`);
    expect(health.status).toBe(200);

    const client = clientForDataDir(dataDir);
    if (!client) throw new Error('no serve.json');
    let out = '';
    const conn = client.shell(id, { rows: 24, cols: 80, onOutput: (c) => (out += Buffer.from(c.data).toString()) });
    conn.write(Buffer.from('echo still-$((40+2)); exit 4\n'));
    expect(await conn.done).toEqual({ exitCode: 4, signal: null });
    expect(out).toContain('still-42');
  }, 300_000);
});

/** The status code of the first close frame among the server's (unmasked) frames in `buf`, if any. */
function closeCode(buf: Buffer): number | null {
  let at = 0;
  while (at + 2 <= buf.length) {
    const opcode = (buf[at] ?? 0) & 0x0f;
    let len = (buf[at + 1] ?? 0) & 0x7f;
    let head = 2;
    if (len === 126) {
      len = buf.readUInt16BE(at + 2);
      head = 4;
    } else if (len === 127) {
      len = Number(buf.readBigUInt64BE(at + 2));
      head = 10;
    }
    if (opcode === 0x8) return len >= 2 ? buf.readUInt16BE(at + head) : null;
    at += head + len;
  }
  return null;
}
