/**
 * What a test of the chart behind an Ingress needs around it: a private CA and a server
 * certificate for a host name (openssl), the remote CLI run as a user whose DNS knows that name,
 * and plain HTTPS requests to the Ingress under that name.
 *
 * Name resolution: the CLI runs in a private mount namespace (`unshare --mount`, we are root) whose
 * /etc/hosts is a bind mount of a file mapping the names to 127.0.0.1, where the test ingress
 * controller listens. The real /etc/hosts is never touched.
 * @module
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CLI, type CliResult } from '../../integration/cli/helpers.js';

const run = promisify(execFile);

export interface TestCertificates {
  /** The CA certificate (PEM file) the CLI is given with `--ca`. */
  caFile: string;
  /** The same, its PEM text. */
  ca: string;
  /** The server certificate and key (PEM) for the kubernetes.io/tls Secret. */
  cert: string;
  key: string;
}

/** A private CA (`dir/ca.pem`) and a certificate for `host` it signed (SAN DNS:host), with openssl. */
export async function makeCertificates(dir: string, host: string): Promise<TestCertificates> {
  const p = (name: string): string => join(dir, name);
  const openssl = (args: string[]): Promise<unknown> => run('openssl', args, { cwd: dir });
  await openssl(['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', p('ca.key'), '-out', p('ca.pem'), '-days', '2', '-subj', '/CN=berth test CA']);
  await openssl(['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', p('tls.key'), '-out', p('tls.csr'), '-subj', `/CN=${host}`]);
  writeFileSync(p('san.ext'), `subjectAltName=DNS:${host}\nextendedKeyUsage=serverAuth\n`);
  await openssl(['x509', '-req', '-in', p('tls.csr'), '-CA', p('ca.pem'), '-CAkey', p('ca.key'), '-CAcreateserial', '-out', p('tls.crt'), '-days', '2', '-extfile', p('san.ext')]);
  return { caFile: p('ca.pem'), ca: readFileSync(p('ca.pem'), 'utf8'), cert: readFileSync(p('tls.crt'), 'utf8'), key: readFileSync(p('tls.key'), 'utf8') };
}

/** A running CLI: what it wrote so far, and its exit code once it ended and its output was read (null: a signal). */
export type RunningCli = ChildProcess & { output(): string; errors(): string; closed: Promise<number | null> };

export interface IngressCli {
  /** `berth ARGS` to the end, stdin `input` (then closed). */
  run(args: string[], input?: string): Promise<CliResult>;
  /** `berth ARGS` running: stdin and stdout piped, stderr collected. */
  spawn(args: string[]): RunningCli;
}

/**
 * The built CLI as a user on their machine runs it (no data dir, its own config and home under
 * `dir`), in a mount namespace where /etc/hosts maps each of `hosts` to 127.0.0.1.
 */
export function ingressCli(dir: string, hosts: string[]): IngressCli {
  const hostsFile = join(dir, 'hosts');
  writeFileSync(hostsFile, `127.0.0.1 localhost\n::1 localhost\n127.0.0.1 ${hosts.join(' ')}\n`);
  const env = { ...process.env, BERTH_DATA_DIR: '', XDG_CONFIG_HOME: join(dir, 'config'), HOME: join(dir, 'home'), BERTH_TEST_HOSTS_FILE: hostsFile };
  const argv = (args: string[]): string[] => [
    '--mount',
    '--propagation',
    'private',
    'sh',
    '-c',
    'mount --bind "$BERTH_TEST_HOSTS_FILE" /etc/hosts && exec "$@"',
    'sh',
    process.execPath,
    CLI,
    ...args,
  ];
  const start = (args: string[]): RunningCli => {
    const child = spawn('unshare', argv(args), { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const closed = new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', (code) => resolve(code));
    });
    return Object.assign(child, { output: () => out, errors: () => err, closed });
  };
  return {
    async run(args, input) {
      const child = start(args);
      child.stdin?.end(input ?? '');
      const code = await child.closed;
      return { code, stdout: child.output(), stderr: child.errors() };
    },
    spawn: start,
  };
}

export interface HttpsAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * One request to 127.0.0.1:`port` as `https://host:port` (SNI, Host, the CA `ca`), or as
 * `http://host:port` when `ca` is null; the body read whole.
 */
export function requestVia(
  port: number,
  host: string,
  ca: string | null,
  req: { method?: string; path: string; headers?: Record<string, string>; body?: string },
): Promise<HttpsAnswer> {
  const send = ca === null ? httpRequest : request;
  return new Promise((resolve, reject) => {
    const r = send(
      { host: '127.0.0.1', port, ...(ca !== null ? { servername: host, ca } : {}), method: req.method ?? 'GET', path: req.path, headers: { host: `${host}:${port}`, ...req.headers }, timeout: 30_000 },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    r.on('timeout', () => r.destroy(new Error(`${req.method ?? 'GET'} ${req.path}: no answer within 30 s`)));
    r.on('error', reject);
    r.end(req.body);
  });
}
