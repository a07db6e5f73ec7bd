/**
 * The CLI against a remote controller: a real `berth serve --tls-cert/--tls-key` (a throwaway CA
 * and server certificate made with openssl, loopback only), reached with `--server https://…`
 * after `berth login --ca`: every kind of call (unary, event stream, exec and log streams, the
 * shell WebSocket) goes over verified TLS with the stored token. A wrong CA, a refused token and
 * an unreachable server each fail with what to do next.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, makeRepo, ROOT, runCli, stopProcess, tempDir, type CliResult } from './helpers.js';

/** A CA and a certificate for 127.0.0.1 signed by it, plus an unrelated CA (the wrong one). */
function makeCerts(dir: string): { ca: string; otherCa: string; cert: string; key: string } {
  const ssl = (...args: string[]): void => {
    execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  };
  for (const name of ['ca', 'other-ca']) {
    ssl('req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '2', '-subj', `/CN=berth test ${name}`, '-keyout', `${name}.key`, '-out', `${name}.pem`);
  }
  ssl('req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-subj', '/CN=127.0.0.1', '-keyout', 'server.key', '-out', 'server.csr');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n');
  ssl('x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial', '-days', '2', '-extfile', 'san.ext', '-out', 'server.pem');
  return { ca: join(dir, 'ca.pem'), otherCa: join(dir, 'other-ca.pem'), cert: join(dir, 'server.pem'), key: join(dir, 'server.key') };
}

/** `berth serve` over TLS on a free loopback port; resolves once it listens. */
async function startTlsServe(dataDir: string, cert: string, key: string): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--data-dir', dataDir, '--port', '0', '--tls-cert', cert, '--tls-key', key], {
    cwd: ROOT,
    env: { ...process.env, BERTH_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    const onData = (d: Buffer): void => {
      out += d.toString();
      const m = /listening on https:\/\/127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`berth serve exited with ${code}:\n${out}`)));
  });
  return { child, port };
}

describe('berth against a remote controller over TLS', () => {
  let root: string;
  let dataDir: string;
  let repo: string;
  let certs: ReturnType<typeof makeCerts>;
  let serve: ChildProcess | undefined;
  let server: string;
  let token: string;
  /** The CLI as a user elsewhere runs it: no data dir, its own config home. */
  let remote: (args: string[], opts?: { input?: string; config?: string }) => Promise<CliResult>;

  beforeAll(async () => {
    ensureBuilt();
    root = tempDir('berth-cli-remote-');
    dataDir = join(root, 'data');
    repo = join(root, 'repo');
    makeRepo(repo);
    certs = makeCerts(root);
    const started = await startTlsServe(dataDir, certs.cert, certs.key);
    serve = started.child;
    server = `https://127.0.0.1:${started.port}`;
    token = readFileSync(join(dataDir, 'state', 'api-token'), 'utf8').trim();
    remote = (args, opts = {}) =>
      runCli(args, { ...(opts.input !== undefined ? { input: opts.input } : {}), env: { XDG_CONFIG_HOME: opts.config ?? join(root, 'config'), HOME: join(root, 'home') } });
  });

  afterAll(async () => {
    const left = await remote(['--server', server, 'ls', '-o', 'json']);
    if (left.code === 0) {
      for (const s of (JSON.parse(left.stdout) as { sessions: { id: string }[] }).sessions) await remote(['--server', server, 'rm', '--force', s.id]);
    }
    await stopProcess(serve);
    rmSync(root, { recursive: true, force: true });
  });

  it('refuses a server whose certificate the given CA did not sign, naming --ca, and stores nothing', async () => {
    const wrong = await remote(['login', '--token-stdin', '--ca', certs.otherCa, server], { input: token });
    expect(wrong.code).toBe(5);
    expect(wrong.stderr).toContain(`TLS verification of ${server} failed`);
    expect(wrong.stderr).toContain('--ca FILE');
    expect(wrong.stderr).not.toContain(token);
    const none = await remote(['login', '--token-stdin', server], { input: token });
    expect(none.code, 'the CA is not in Node\'s store either').toBe(5);
    expect(none.stderr).toContain('TLS verification');
    expect((await remote(['context', 'ls'])).stdout).not.toContain(server);
  });

  it('refuses a wrong token at login, saying where the token is', async () => {
    const bad = await remote(['login', '--token-stdin', '--ca', certs.ca, server], { input: 'not-the-token' });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('refused the token; nothing was stored');
    expect(bad.stderr).toContain('state/api-token');
  });

  it('logs in, then runs ls, launch, exec, logs -f, shell and rm through --server', async () => {
    const login = await remote(['login', '--token-stdin', '--ca', certs.ca, '--name', 'test', server], { input: `${token}\n` });
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout).toContain(`logged in to ${server} as context test`);
    expect(login.stdout).not.toContain(token);
    const file = join(root, 'config', 'berth', 'config.yaml');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const ls = await remote(['context', 'ls']);
    expect(ls.stdout).toMatch(new RegExp(`\\*\\s+test\\s+${server.replaceAll('.', '\\.')}\\s+${certs.ca}`));
    expect(ls.stdout).not.toContain(token);

    const at = (args: string[], input?: string): Promise<CliResult> => remote(['--server', server, ...args], input !== undefined ? { input } : {});
    expect(JSON.parse((await at(['ls', '-o', 'json'])).stdout)).toEqual({ sessions: [] });

    const launch = await at(['launch', '--repo', repo, '--agent', 'demo', '--name', 'remote', '--prompt', 'hello remote', '--env', 'BERTH_DEMO_STEP_MS=0']);
    expect(launch.stderr).toBe('');
    expect(launch.code).toBe(0);
    const id = /Session (\S+) is ready/.exec(launch.stdout)?.[1];
    expect(id, launch.stdout).toBeDefined();
    if (id === undefined) return;

    const git = await at(['exec', id, '--', 'git', 'status']);
    expect(git.code, git.stderr).toBe(0);
    expect(git.stdout).toContain('On branch main');
    const seven = await at(['exec', id, '--', 'sh', '-c', 'echo out; exit 7']);
    expect(seven.code).toBe(7);
    expect(seven.stdout).toBe('out\n');

    expect(await followLogsUntil(['--server', server, 'logs', '-f', id], 'agent> ready for instructions', join(root, 'config'), join(root, 'home'))).toContain('agent> task: hello remote');

    const shell = await at(['shell', id], 'tty; exit 4\n');
    expect(shell.code, `the shell's WebSocket over TLS: ${shell.stderr}`).toBe(4);
    expect(shell.stdout).toMatch(/\/dev\/pts\/\d+/);

    const rm = await at(['rm', id]);
    expect(rm.code, rm.stderr).toBe(0);
    // the current context alone (no --server) reaches the same controller
    expect(JSON.parse((await remote(['ls', '-o', 'json'])).stdout)).toEqual({ sessions: [] });
  });

  it('says berth login when the stored token is refused, and what to check when nothing answers', async () => {
    const other = join(root, 'config-stale');
    const setup = await remote(['login', '--token-stdin', '--ca', certs.ca, '--name', 'stale', server], { input: token, config: other });
    expect(setup.code).toBe(0);
    const file = join(other, 'berth', 'config.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(token, 'an-old-token'), { mode: 0o600 });
    const refused = await remote(['ls'], { config: other });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`${server} refused the API token`);
    expect(refused.stderr).toContain(`hint: log in with a current token: berth login ${server} --name stale`);

    const down = await remote(['--server', 'https://127.0.0.1:1', 'ls']);
    expect(down.code).toBe(5);
    expect(down.stderr).toContain('cannot reach the berth controller at https://127.0.0.1:1 (ECONNREFUSED)');

    const wrongCa = await remote(['--server', server.replace('127.0.0.1', 'localhost'), 'ls']);
    expect(wrongCa.code, 'a URL no context knows has no CA: verification fails').toBe(5);
    expect(wrongCa.stderr).toContain('--ca FILE');
  });

  it('logout forgets the context and its token; berth is local again', async () => {
    const out = await remote(['logout', 'test']);
    expect(out.code).toBe(0);
    expect(readFileSync(join(root, 'config', 'berth', 'config.yaml'), 'utf8')).not.toContain(token);
    expect((await remote(['context'])).stdout).toMatch(/^local data dir /);
    expect((await remote(['logout', 'test'])).code, 'an unknown context').toBe(3);
  });
});

/** Runs `berth ARGS` (logs -f) until its stdout has `marker`, then interrupts it; resolves with the output. */
function followLogsUntil(args: string[], marker: string, configHome: string, home: string): Promise<string> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd: ROOT, env: { ...process.env, BERTH_DATA_DIR: '', XDG_CONFIG_HOME: configHome, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(marker) && child.pid !== undefined) process.kill(child.pid, 'SIGINT');
    });
    child.once('close', () => (out.includes(marker) ? resolve(out) : reject(new Error(`logs -f ended before ${JSON.stringify(marker)}:\n${out}\n${err}`))));
  });
}
