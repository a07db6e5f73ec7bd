/**
 * A fault-injecting proxy in front of the real kube-apiserver, for tests: it terminates TLS on
 * 127.0.0.1 with a certificate issued (openssl, in a temp dir) by the test cluster's CA, and
 * forwards every request — plain calls, watches, and WebSocket upgrades (exec, port-forward) — to
 * the API server over TLS, passing the client's Authorization header through (so the code under
 * test must use a token kubeconfig, e.g. the ServiceAccount one). Rules, switchable at run time,
 * match method + a regex over the request URL (path and query), optionally for the first N hits
 * only, and delay a request, answer it with a 5xx before forwarding, forward it and then lose the
 * answer (a 5xx instead, or a cut socket: the ambiguous case), or cut a long-running stream after
 * N bytes from the server. `cutStreams` cuts every live stream at a signal. Everything it saw is
 * recorded (method, URL, status) for assertions.
 * @module
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { createServer, request as httpsRequest } from 'node:https';
import { isIP, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { parse, stringify } from 'yaml';

export type FaultAction =
  /** Wait `ms` before forwarding. */
  | { kind: 'delay'; ms: number }
  /** Answer `status` without forwarding: the API server never sees the request. */
  | { kind: 'fail-before'; status: number }
  /** Forward, let the API server finish it, drop its answer and send `status` instead. */
  | { kind: 'fail-after'; status: number }
  /** Forward, and destroy the client's socket once the API server has answered (no answer reaches the client). */
  | { kind: 'cut-after' }
  /** Forward a stream (watch, exec, port-forward) and destroy it once `bytes` came from the server. */
  | { kind: 'cut-stream'; bytes: number };

export interface FaultRule {
  /** HTTP method (upper case); any when omitted. WebSocket upgrades arrive as GET (exec may be POST). */
  method?: string;
  /** Tested against the request URL (path and query). */
  path: RegExp;
  /** Applies to the first `times` matching requests only; every one when omitted. */
  times?: number;
  action: FaultAction;
}

export interface RuleHandle {
  /** How many requests this rule acted on. */
  hits(): number;
  remove(): void;
}

export interface SeenRequest {
  method: string;
  url: string;
  /** What the client got: the upstream status, the injected one, or 0 when the socket was cut. */
  status: number;
  /** True when a rule acted on it. */
  faulted: boolean;
  upgrade: boolean;
}

export interface ApiProxy {
  /** `https://127.0.0.1:<port>` */
  readonly server: string;
  /** PEM of the CA that issued the proxy's certificate (the cluster CA). */
  readonly caPem: string;
  add(rule: FaultRule): RuleHandle;
  clearRules(): void;
  /** Everything seen so far, oldest first. */
  seen(): SeenRequest[];
  /** How many streams (in-flight responses or upgraded connections) whose URL matches are live now. */
  liveStreams(path?: RegExp): number;
  /** Destroys every live stream (watch or upgraded connection) whose URL matches; returns how many. */
  cutStreams(path?: RegExp): number;
  /** Copies `kubeconfigPath` with every cluster pointed at the proxy (server and CA); returns the new path. */
  kubeconfigFor(kubeconfigPath: string): string;
  close(): Promise<void>;
}

interface LiveRule extends FaultRule {
  count: number;
}

interface Upstream {
  host: string;
  port: number;
  ca: string;
}

/** A server certificate for 127.0.0.1 issued by the cluster CA under `pkiDir` (ca.crt, ca.key). */
function issueCertificate(pkiDir: string, dir: string): { cert: string; key: string } {
  const run = (...args: string[]): void => void execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  run('req', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'proxy.key', '-out', 'proxy.csr', '-subj', '/CN=berth-test-api-proxy');
  writeFileSync(join(dir, 'ext.cnf'), 'subjectAltName=IP:127.0.0.1\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n');
  // A serial of our own: the cluster's ca.srl is shared and never written by tests.
  const serial = `0x${Date.now().toString(16)}${Math.floor(Math.random() * 0xffff).toString(16)}`;
  run('x509', '-req', '-in', 'proxy.csr', '-CA', join(pkiDir, 'ca.crt'), '-CAkey', join(pkiDir, 'ca.key'), '-set_serial', serial, '-out', 'proxy.crt', '-days', '1', '-extfile', 'ext.cnf');
  return { cert: readFileSync(join(dir, 'proxy.crt'), 'utf8'), key: readFileSync(join(dir, 'proxy.key'), 'utf8') };
}

function statusBody(code: number): string {
  return JSON.stringify({
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: `injected by the test API proxy: HTTP ${code}`,
    reason: code === 503 ? 'ServiceUnavailable' : 'InternalError',
    code,
  });
}

/** Headers for the upstream request: the client's, with Host rewritten. */
function forwardHeaders(headers: IncomingHttpHeaders, up: Upstream): IncomingHttpHeaders {
  return { ...headers, host: `${up.host}:${up.port}` };
}

/**
 * Starts the proxy in front of `target` (the API server URL), trusting `pkiDir`/ca.crt for the
 * upstream and issuing its own certificate from `pkiDir`/ca.key.
 */
export async function startApiProxy(target: string, pkiDir: string): Promise<ApiProxy> {
  const url = new URL(target);
  const caPem = readFileSync(join(pkiDir, 'ca.crt'), 'utf8');
  const up: Upstream = { host: url.hostname, port: Number(url.port || 443), ca: caPem };
  const dir = mkdtempSync(join(tmpdir(), 'berth-api-proxy-'));
  const { cert, key } = issueCertificate(pkiDir, dir);
  const rules: LiveRule[] = [];
  const log: SeenRequest[] = [];
  const streams = new Set<{ url: string; cut: () => void }>();
  const sockets = new Set<Socket>();

  /** The actions of the rules matching this request (each counted once). */
  const actionsFor = (method: string, reqUrl: string): FaultAction[] => {
    const out: FaultAction[] = [];
    for (const r of rules) {
      if (r.method !== undefined && r.method !== method) continue;
      if (!r.path.test(reqUrl)) continue;
      if (r.times !== undefined && r.count >= r.times) continue;
      r.count++;
      out.push(r.action);
    }
    return out;
  };

  const delayOf = (actions: FaultAction[]): number => actions.reduce((ms, a) => (a.kind === 'delay' ? ms + a.ms : ms), 0);
  const find = <K extends FaultAction['kind']>(actions: FaultAction[], kind: K): Extract<FaultAction, { kind: K }> | undefined =>
    actions.find((a): a is Extract<FaultAction, { kind: K }> => a.kind === kind);

  const onRequest = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const method = req.method ?? 'GET';
    const reqUrl = req.url ?? '/';
    const actions = actionsFor(method, reqUrl);
    const entry: SeenRequest = { method, url: reqUrl, status: 0, faulted: actions.length > 0, upgrade: false };
    log.push(entry);
    const ms = delayOf(actions);
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    const before = find(actions, 'fail-before');
    if (before) {
      req.resume();
      entry.status = before.status;
      res.writeHead(before.status, { 'content-type': 'application/json' }).end(statusBody(before.status));
      return;
    }
    const after = find(actions, 'fail-after');
    const cutAfter = find(actions, 'cut-after');
    const cutStream = find(actions, 'cut-stream');
    const upstream = httpsRequest({ host: up.host, port: up.port, ca: up.ca, method, path: reqUrl, headers: forwardHeaders(req.headers, up) }, (upRes) => {
      if (after || cutAfter) {
        // The API server has done it: drain its answer, then lose it.
        upRes.resume();
        upRes.on('end', () => {
          if (after) {
            entry.status = after.status;
            res.writeHead(after.status, { 'content-type': 'application/json' }).end(statusBody(after.status));
          } else {
            entry.status = 0;
            req.socket.destroy();
          }
        });
        return;
      }
      entry.status = upRes.statusCode ?? 0;
      res.writeHead(upRes.statusCode ?? 502, upRes.headers);
      const live = { url: reqUrl, cut: () => req.socket.destroy() };
      streams.add(live);
      let bytes = 0;
      upRes.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        res.write(chunk);
        if (cutStream && bytes >= cutStream.bytes) live.cut();
      });
      upRes.on('end', () => {
        streams.delete(live);
        res.end();
      });
      upRes.on('error', () => live.cut());
      res.on('close', () => {
        streams.delete(live);
        upstream.destroy();
      });
    });
    upstream.on('error', () => req.socket.destroy());
    req.pipe(upstream);
  };

  const onUpgrade = async (req: IncomingMessage, client: Socket, head: Buffer): Promise<void> => {
    const method = req.method ?? 'GET';
    const reqUrl = req.url ?? '/';
    const actions = actionsFor(method, reqUrl);
    const entry: SeenRequest = { method, url: reqUrl, status: 0, faulted: actions.length > 0, upgrade: true };
    log.push(entry);
    client.on('error', () => client.destroy());
    const ms = delayOf(actions);
    if (ms > 0) await new Promise((r) => setTimeout(r, ms));
    const before = find(actions, 'fail-before');
    if (before) {
      entry.status = before.status;
      const body = statusBody(before.status);
      client.end(`HTTP/1.1 ${before.status} Injected\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
      return;
    }
    const cutStream = find(actions, 'cut-stream');
    const server = tlsConnect({ host: up.host, port: up.port, ca: up.ca, ...(isIP(up.host) ? {} : { servername: up.host }) });
    const live = {
      url: reqUrl,
      cut: () => {
        client.destroy();
        server.destroy();
      },
    };
    streams.add(live);
    const end = (): void => {
      streams.delete(live);
      live.cut();
    };
    server.on('error', end).on('close', end);
    client.on('close', end);
    server.once('secureConnect', () => {
      const headers = forwardHeaders(req.headers, up);
      let text = `${method} ${reqUrl} HTTP/1.1\r\n`;
      for (const [name, value] of Object.entries(headers)) {
        for (const v of Array.isArray(value) ? value : [value ?? '']) text += `${name}: ${v}\r\n`;
      }
      server.write(`${text}\r\n`);
      if (head.length > 0) server.write(head);
      client.pipe(server);
      let bytes = 0;
      server.on('data', (chunk: Buffer) => {
        if (entry.status === 0) entry.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.toString('latin1', 0, 16))?.[1] ?? 0);
        bytes += chunk.length;
        client.write(chunk);
        if (cutStream && bytes >= cutStream.bytes) live.cut();
      });
    });
  };

  const httpsServer = createServer({ cert, key }, (req, res) => void onRequest(req, res));
  httpsServer.on('upgrade', (req: IncomingMessage, socket: Socket, head: Buffer) => void onUpgrade(req, socket, head));
  httpsServer.on('secureConnection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  httpsServer.on('clientError', (_err, socket: Socket) => socket.destroy());
  await new Promise<void>((resolve) => httpsServer.listen(0, '127.0.0.1', resolve));
  const { port } = httpsServer.address() as AddressInfo;
  const server = `https://127.0.0.1:${port}`;

  return {
    server,
    caPem,
    add(rule) {
      const live: LiveRule = { ...rule, count: 0 };
      rules.push(live);
      return {
        hits: () => live.count,
        remove: () => {
          const i = rules.indexOf(live);
          if (i >= 0) rules.splice(i, 1);
        },
      };
    },
    clearRules: () => void rules.splice(0, rules.length),
    seen: () => log.map((e) => ({ ...e })),
    liveStreams: (path) => [...streams].filter((s) => !path || path.test(s.url)).length,
    cutStreams(path) {
      const hit = [...streams].filter((s) => !path || path.test(s.url));
      for (const s of hit) s.cut();
      return hit.length;
    },
    kubeconfigFor(kubeconfigPath) {
      const doc = parse(readFileSync(kubeconfigPath, 'utf8')) as { clusters?: { cluster: Record<string, unknown> }[] };
      for (const c of doc.clusters ?? []) {
        c.cluster.server = server;
        delete c.cluster['certificate-authority'];
        c.cluster['certificate-authority-data'] = Buffer.from(caPem).toString('base64');
      }
      const out = join(dir, `kubeconfig-${Math.random().toString(36).slice(2, 8)}`);
      writeFileSync(out, stringify(doc), { mode: 0o600 });
      return out;
    },
    async close() {
      rules.splice(0, rules.length);
      for (const s of streams) s.cut();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => httpsServer.close(() => resolve()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
