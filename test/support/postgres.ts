/**
 * A throwaway real Postgres (Debian's) for tests: a fresh cluster in a temp dir, listening on
 * 127.0.0.1 (and, with `listen`, one more address, e.g. where the test cluster's Pods reach the
 * host) with a free port and password (SCRAM) authentication, that a test can stop and start
 * again (same data, same port). As root the server runs as `nobody` (Postgres refuses root).
 * Never skips: when Postgres cannot start, startPostgres throws with the reason and the server log.
 */
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, chmodSync, chownSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface TestPostgres {
  /**
   * The connection string of database `db` (default `postgres`), with user and password; `host`
   * (default 127.0.0.1) names the address a client elsewhere reaches (one of `listen`'s).
   */
  url(db?: string, host?: string): string;
  /** The password in the connection strings (tests check it never shows in an error). */
  readonly password: string;
  /** Creates an empty database and returns its connection string. */
  createDatabase(name: string): Promise<string>;
  /** Fast shutdown (SIGINT to the postmaster's PID); resolves when the process has exited. */
  stop(): Promise<void>;
  /** Starts the server again on the same data and port; resolves when it accepts connections. */
  start(): Promise<void>;
  /** Stops the server (by PID) and removes its files. */
  close(): Promise<void>;
}

export interface TestPostgresOptions {
  /**
   * Listen on this address too (besides 127.0.0.1), e.g. the test cluster's bridge address that
   * Pods reach the host on, and accept password (SCRAM) logins from `clients` (a CIDR, e.g.
   * 10.213.0.0/24). Default: 127.0.0.1 only.
   */
  listen?: { address: string; clients: string };
}

const USER = 'berth';

function binDir(): string {
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions[0] !== undefined) return join(root, versions[0], 'bin');
  try {
    const initdb = execFileSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' }).trim();
    if (initdb !== '') return initdb.slice(0, initdb.lastIndexOf('/'));
  } catch {
    /* reported below */
  }
  throw new Error('test Postgres: no initdb/postgres found (under /usr/lib/postgresql/*/bin or on PATH); install Debian\'s postgresql (test/cluster/install-deps.sh)');
}

/** As root: the command run as `nobody` (setpriv), and nobody's uid/gid for the files it must own. */
function unprivileged(): { prefix: string[]; uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const uid = Number(execFileSync('id', ['-u', 'nobody'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'nobody'], { encoding: 'utf8' }).trim());
  return { prefix: ['setpriv', `--reuid=${uid}`, `--regid=${gid}`, '--clear-groups', '--'], uid, gid };
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export async function startPostgres(opts: TestPostgresOptions = {}): Promise<TestPostgres> {
  const bin = binDir();
  const as = unprivileged();
  const base = mkdtempSync(join(tmpdir(), 'berth-pg-'));
  chmodSync(base, 0o755);
  const data = join(base, 'data');
  mkdirSync(data, { mode: 0o700 });
  const password = randomBytes(12).toString('hex');
  const pwfile = join(base, 'pw');
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (as) for (const p of [data, pwfile]) chownSync(p, as.uid, as.gid);
  const run = (argv: string[]): string[] => [...(as?.prefix ?? []), ...argv];
  const [initCmd, ...initArgs] = run([join(bin, 'initdb'), '-D', data, '-U', USER, `--pwfile=${pwfile}`, '--auth-host=scram-sha-256', '--auth-local=trust', '-E', 'UTF8', '--no-locale']);
  try {
    execFileSync(initCmd!, initArgs, { stdio: 'pipe', env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } });
  } catch (err) {
    rmSync(base, { recursive: true, force: true });
    const stderr = (err as { stderr?: Buffer }).stderr?.toString() ?? String(err);
    throw new Error(`test Postgres: initdb failed: ${stderr.slice(-2000)}`);
  }
  rmSync(pwfile);
  if (opts.listen) appendFileSync(join(data, 'pg_hba.conf'), `host all all ${opts.listen.clients} scram-sha-256\n`);
  const listenAddresses = ['127.0.0.1', ...(opts.listen ? [opts.listen.address] : [])].join(',');
  const port = await freePort();
  let child: ChildProcess | null = null;

  const url = (db = 'postgres', host = '127.0.0.1'): string => `postgresql://${USER}:${password}@${host}:${port}/${db}`;

  // a test process that dies without its afterAll still takes its server down
  const killOnExit = (): void => {
    if (child?.pid !== undefined && child.exitCode === null) process.kill(child.pid, 'SIGQUIT');
  };
  process.once('exit', killOnExit);

  async function start(): Promise<void> {
    const [cmd, ...args] = run([join(bin, 'postgres'), '-D', data, '-c', `listen_addresses=${listenAddresses}`, '-p', String(port), '-c', `unix_socket_directories=${data}`]);
    const proc = spawn(cmd!, args, { stdio: ['ignore', 'ignore', 'pipe'], env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LC_ALL: 'C' } });
    child = proc;
    let log = '';
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`test Postgres: not ready after 60 s; log:\n${log.slice(-3000)}`)), 60_000);
      proc.stderr?.on('data', (chunk: Buffer) => {
        log += chunk.toString();
        if (log.includes('database system is ready to accept connections')) {
          clearTimeout(timer);
          resolve();
        }
      });
      proc.once('exit', (code, signal) => {
        clearTimeout(timer);
        reject(new Error(`test Postgres: exited (${code ?? signal}) before accepting connections; log:\n${log.slice(-3000)}`));
      });
      proc.once('error', (err) => {
        clearTimeout(timer);
        reject(new Error(`test Postgres: cannot run ${cmd}: ${err.message}`));
      });
    });
    proc.stderr?.resume();
  }

  async function stop(): Promise<void> {
    const proc = child;
    child = null;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null || proc.pid === undefined) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    process.kill(proc.pid, 'SIGINT'); // fast shutdown: aborts sessions, then a checkpoint
    await exited;
  }

  try {
    await start();
  } catch (err) {
    await stop();
    rmSync(base, { recursive: true, force: true });
    throw err;
  }

  return {
    url,
    password,
    async createDatabase(name: string): Promise<string> {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stop,
    start,
    async close(): Promise<void> {
      process.removeListener('exit', killOnExit);
      await stop();
      rmSync(base, { recursive: true, force: true });
    },
  };
}
