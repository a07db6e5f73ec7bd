/**
 * The in-Pod half of the forwarded-RPC benchmark (issue 11, figure 6): a small CommonJS script run
 * with the agent image's Node (20) through an exec in the session's Pod. It makes the same HTTP
 * requests the controller makes through its supervised forward, straight to agentctl on
 * 127.0.0.1 inside the Pod, and prints the timings (ms, one array per figure) as one JSON line.
 *
 * Its input comes on stdin as JSON ({@link PodInput}): the bearer token travels there, never in
 * argv or env (both show up in process listings and in agentctl's process records). The script
 * uses `fetch` (undici, as the controller's client does) for the HTTP calls and a minimal
 * WebSocket reader over `node:http` for the exec's output stream (Node 20 has no global
 * WebSocket, and `ws` is not in the image). Pure text; nothing here runs in this process.
 * @module
 */

/** What the script reads from stdin. */
export interface PodInput {
  token: string;
  instanceId: string;
  /** agentctl's control port in the Pod (to look the instance's port up). */
  controlPort: number;
  /** Timed repetitions per figure; 0 skips the figure. */
  reps: { health: number; files: number; exec: number };
  /** Untimed requests before each figure's timed ones (connection set-up, JIT), per figure. */
  warmup: { health: number; files: number; exec: number };
  /** Workspace-relative files to read, with their expected sizes. */
  files: { name: string; path: string; bytes: number }[];
}

/** What the script prints: samples in ms per figure (`health`, `exec`, `file.<name>`). */
export interface PodOutput {
  node: string;
  instancePort: number;
  samples: Record<string, number[]>;
}

/** The script's source, for `node -e`. */
export const POD_SCRIPT = String.raw`
'use strict';
const http = require('node:http');
const crypto = require('node:crypto');
const { performance } = require('node:perf_hooks');

function wsExit(port, path, headers) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path, headers: Object.assign({}, headers, {
      Connection: 'Upgrade', Upgrade: 'websocket', 'Sec-WebSocket-Version': '13',
      'Sec-WebSocket-Key': crypto.randomBytes(16).toString('base64') }) });
    req.on('response', (res) => reject(new Error('stream: HTTP ' + res.statusCode)));
    req.on('error', reject);
    req.on('upgrade', (_res, socket, head) => {
      let buf = head;
      let text = '';
      const done = (v, err) => {
        socket.removeAllListeners('data');
        // a masked, empty close frame, then end: what a polite client does after the exit message
        socket.end(Buffer.from([0x88, 0x80, 0, 0, 0, 0]));
        if (err) reject(err); else resolve(v);
      };
      const onData = (d) => {
        if (d) buf = Buffer.concat([buf, d]);
        for (;;) {
          if (buf.length < 2) return;
          const op = buf[0] & 0x0f;
          const fin = (buf[0] & 0x80) !== 0;
          let len = buf[1] & 0x7f;
          let off = 2;
          if (len === 126) { if (buf.length < 4) return; len = buf.readUInt16BE(2); off = 4; }
          else if (len === 127) { if (buf.length < 10) return; len = Number(buf.readBigUInt64BE(2)); off = 10; }
          if (buf.length < off + len) return;
          const payload = buf.subarray(off, off + len);
          buf = buf.subarray(off + len);
          if (op === 8) return done(null, new Error('stream closed before the exit message'));
          if (op !== 1 && op !== 0) continue;
          text += payload.toString('utf8');
          if (!fin) continue;
          const msg = JSON.parse(text);
          text = '';
          if (msg.type === 'exit') return done(msg);
          if (msg.type === 'error') return done(null, new Error('stream: ' + msg.code + ' ' + msg.message));
        }
      };
      socket.on('data', onData);
      socket.on('error', reject);
      onData(null);
    });
    req.end();
  });
}

async function main(input) {
  const auth = { authorization: 'Bearer ' + input.token };
  const ctl = await fetch('http://127.0.0.1:' + input.controlPort + '/api/v1/instances', { headers: auth });
  if (!ctl.ok) throw new Error('instances: HTTP ' + ctl.status);
  const inst = (await ctl.json()).instances.find((i) => i.id === input.instanceId);
  if (!inst) throw new Error('instance not found');
  const port = inst.port;
  const base = 'http://127.0.0.1:' + port;
  const headers = Object.assign({ 'x-instance-id': input.instanceId }, auth);
  const json = { 'content-type': 'application/json' };
  const samples = {};
  const time = async (key, reps, warmup, fn) => {
    for (let i = 0; i < warmup && reps > 0; i++) await fn();
    const out = (samples[key] = []);
    for (let i = 0; i < reps; i++) {
      const t0 = performance.now();
      await fn();
      out.push(performance.now() - t0);
    }
  };
  const get = async (path) => {
    const res = await fetch(base + path, { headers });
    if (!res.ok) throw new Error(path + ': HTTP ' + res.status);
    return res.json();
  };
  const post = async (path, body) => {
    const res = await fetch(base + path, { method: 'POST', headers: Object.assign({}, headers, json), body: JSON.stringify(body) });
    if (!res.ok) throw new Error(path + ': HTTP ' + res.status);
    return res.status === 204 ? undefined : res.text();
  };
  await time('health', input.reps.health, input.warmup.health, async () => {
    const h = await get('/health');
    if (h.status !== 'ok') throw new Error('health: ' + JSON.stringify(h));
  });
  for (const f of input.files) {
    await time('file.' + f.name, input.reps.files, input.warmup.files, async () => {
      const c = await get('/api/v1/files/content?path=' + encodeURIComponent(f.path));
      const n = Buffer.from(c.content, 'base64').length;
      if (n !== f.bytes) throw new Error(f.path + ': ' + n + ' bytes, expected ' + f.bytes);
    });
  }
  await time('exec', input.reps.exec, input.warmup.exec, async () => {
    const p = JSON.parse(await post('/api/v1/processes', { command: ['true'], kind: 'process' }));
    const id = encodeURIComponent(p.id);
    try { await post('/api/v1/processes/' + id + '/stdin', { data: '', encoding: 'utf8', eof: true }); } catch { /* already exited */ }
    const exit = await wsExit(port, '/api/v1/processes/' + id + '/stream?from=0', headers);
    if (exit.exit_code !== 0) throw new Error('exec true: exit ' + JSON.stringify(exit));
  });
  return { node: process.version, instancePort: port, samples };
}

let raw = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => { raw += d; });
process.stdin.on('end', () => {
  main(JSON.parse(raw)).then(
    (r) => { process.stdout.write(JSON.stringify(r) + '\n'); },
    (e) => { process.stderr.write('rpc-pod: ' + (e && e.message ? e.message : String(e)) + '\n'); process.exitCode = 1; },
  );
});
`;

/** The JSON line the script printed (the last line starting with `{`), or an error with its stderr. */
export function parsePodOutput(stdout: string, stderr: string, exitCode: number | null): PodOutput {
  const line = stdout
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l.startsWith('{'))
    .at(-1);
  if (exitCode !== 0 || line === undefined) throw new Error(`in-Pod script failed (exit ${String(exitCode)}): ${stderr.slice(-1000)}`);
  const out = JSON.parse(line) as PodOutput;
  if (typeof out.samples !== 'object' || out.samples === null) throw new Error('in-Pod script printed no samples');
  return out;
}
