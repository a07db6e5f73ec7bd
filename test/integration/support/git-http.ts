/**
 * A git smart-HTTP server for tests (on 127.0.0.1, or the test cluster's bridge address for Pods): node:http in front of `git http-backend` (CGI),
 * requiring HTTP basic auth with one user and password. Records the request paths and the
 * Authorization outcomes so a test can check what a client sent.
 * @module
 */
import { spawn } from 'node:child_process';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GitHttpServer {
  port: number;
  /** `http://HOST:PORT` */
  origin: string;
  /** One entry per request: `200 GET /repo.git/info/refs` etc. */
  requests: string[];
  close(): Promise<void>;
}

/** Serves the bare repositories under `projectRoot`; every request must carry `user:password` as basic auth. */
export async function startGitHttpServer(projectRoot: string, auth: { user: string; password: string }, opts: { host?: string } = {}): Promise<GitHttpServer> {
  const host = opts.host ?? '127.0.0.1';
  const expected = `Basic ${Buffer.from(`${auth.user}:${auth.password}`).toString('base64')}`;
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    if (req.headers.authorization !== expected) {
      requests.push(`401 ${req.method ?? ''} ${url.pathname}`);
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="berth-test"', 'Content-Type': 'text/plain' });
      res.end('authentication required\n');
      return;
    }
    requests.push(`200 ${req.method ?? ''} ${url.pathname}`);
    cgi(projectRoot, auth.user, req, res, url);
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    origin: `http://${host}:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function cgi(projectRoot: string, user: string, req: IncomingMessage, res: ServerResponse, url: URL): void {
  const header = (name: string): string => {
    const v = req.headers[name];
    return Array.isArray(v) ? v.join(', ') : (v ?? '');
  };
  const child = spawn('git', ['http-backend'], {
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_PROJECT_ROOT: projectRoot,
      GIT_HTTP_EXPORT_ALL: '1',
      REQUEST_METHOD: req.method ?? 'GET',
      PATH_INFO: decodeURIComponent(url.pathname),
      QUERY_STRING: url.search.slice(1),
      CONTENT_TYPE: header('content-type'),
      CONTENT_LENGTH: header('content-length'),
      HTTP_CONTENT_ENCODING: header('content-encoding'),
      HTTP_GIT_PROTOCOL: header('git-protocol'),
      REMOTE_USER: user,
      REMOTE_ADDR: '127.0.0.1',
      SERVER_PROTOCOL: 'HTTP/1.1',
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  req.pipe(child.stdin);
  let head = Buffer.alloc(0);
  let headersDone = false;
  child.stdout.on('data', (data: Buffer) => {
    if (headersDone) {
      res.write(data);
      return;
    }
    head = Buffer.concat([head, data]);
    const end = head.indexOf('\r\n\r\n');
    if (end === -1) return;
    headersDone = true;
    let status = 200;
    for (const line of head.subarray(0, end).toString('latin1').split('\r\n')) {
      const colon = line.indexOf(':');
      if (colon <= 0) continue;
      const name = line.slice(0, colon).trim();
      const value = line.slice(colon + 1).trim();
      if (name.toLowerCase() === 'status') status = Number.parseInt(value, 10) || 200;
      else res.setHeader(name, value);
    }
    res.statusCode = status;
    const body = head.subarray(end + 4);
    if (body.length > 0) res.write(body);
  });
  child.stdout.on('end', () => res.end());
  child.on('error', () => {
    res.statusCode = 500;
    res.end();
  });
}
