/**
 * Credentials in a repository URL and approved secret env, end to end: the real CLI against a real
 * `berth serve`, cloning from a git smart-HTTP server on 127.0.0.1 that requires basic auth. The
 * credential must reach git and nothing else: not the database file (nor its WAL), the API views,
 * the controller's or agentctl's logs, or the workspace's `.git/config`.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InventoryStore } from '../../../src/inventory/index.js';
import { ensureBuilt, removeSessionsAndStop, runCli, startServeProcess } from '../cli/helpers.js';
import { startGitHttpServer, type GitHttpServer } from '../support/git-http.js';
import { cleanup, killLeftovers, makeRepo, tempDir } from './helpers.js';

const SECRET = 's3cret-token';
const WRONG = 'wr0ng-s3cret-pass';
const SECRET_ENV_VALUE = 'env-s3cret-value-42';

interface View {
  id: string;
  state: string;
  repository: { url?: string; credentials?: boolean };
  error: { message: string; stage: string | null } | null;
}

describe('repository URL credentials and --secret-env', () => {
  let work: string;
  let dataDir: string;
  let git: GitHttpServer;
  let serve: ChildProcess | undefined;
  let serveOutput: () => string = () => '';

  beforeAll(async () => {
    ensureBuilt();
    work = tempDir('creds');
    dataDir = join(work, 'data');
    const src = makeRepo(work, 'src', 'creds-marker');
    execFileSync('git', ['clone', '-q', '--bare', src, join(work, 'served', 'repo.git')], { stdio: 'ignore' });
    git = await startGitHttpServer(join(work, 'served'), { user: 'user', password: SECRET });
    // the secrets a launch may name are approved in berth.yaml (one of them is never set)
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'berth.yaml'), 'executors:\n  local:\n    type: local\n    secret_env: [BERTH_IT_SECRET_VALUE, BERTH_IT_NOT_SET_ANYWHERE]\n');
    const started = await startServeProcess(dataDir, [], { BERTH_LOG_LEVEL: 'debug', BERTH_IT_SECRET_VALUE: SECRET_ENV_VALUE });
    serve = started.child;
    serveOutput = started.output;
  });

  afterAll(async () => {
    await removeSessionsAndStop(dataDir, serve);
    await git?.close();
    const leaked = killLeftovers(dataDir);
    cleanup(work);
    expect(leaked).toBe(0);
  });

  const url = (password: string) => `http://user:${password}@127.0.0.1:${git.port}/repo.git`;
  const redacted = () => `http://127.0.0.1:${git.port}/repo.git`;

  async function secretIds(): Promise<string[]> {
    const store = InventoryStore.open({ dataDir });
    try {
      return await store.listSecretIds();
    } finally {
      await store.close();
    }
  }

  /** The raw bytes of berth.db and its WAL/SHM files: a plain-text secret anywhere in them is a leak. */
  function databaseBytes(): string {
    return ['berth.db', 'berth.db-wal', 'berth.db-shm']
      .map((f) => join(dataDir, 'state', f))
      .filter((p) => existsSync(p))
      .map((p) => readFileSync(p).toString('latin1'))
      .join('\n');
  }

  it('clones with the credential and keeps it out of the database, views, logs and .git/config', async () => {
    const launch = await runCli(['launch', '--repo', url(SECRET), '--agent', 'demo', '--env', 'BERTH_DEMO_STEP_MS=0', '-o', 'json'], { dataDir });
    expect(launch.code, launch.stderr).toBe(0);
    const view = JSON.parse(launch.stdout) as View;
    expect(view.state).toBe('ready');
    expect(view.repository).toEqual({ url: redacted(), credentials: true });
    expect(git.requests, 'the clone authenticated').toContain('200 POST /repo.git/git-upload-pack');

    const marker = await runCli(['exec', view.id, '--', 'cat', 'BERTH_MARKER'], { dataDir });
    expect(marker.stdout).toBe('creds-marker\n');
    const origin = await runCli(['exec', view.id, '--', 'git', 'remote', 'get-url', 'origin'], { dataDir });
    expect(origin.stdout.trim(), "the workspace's origin has no credential").toBe(redacted());

    const ls = await runCli(['ls', '-o', 'json'], { dataDir });
    const status = await runCli(['status', view.id, '-o', 'json'], { dataDir });
    expect(ls.code).toBe(0);
    expect(status.code).toBe(0);
    expect((JSON.parse(status.stdout) as View).repository).toEqual({ url: redacted(), credentials: true });
    expect(await secretIds(), 'the credential is in the encrypted store').toContain(`repo-credential-${view.id}`);

    const sessionDir = join(dataDir, 'workspaces', view.id);
    const places: Record<string, string> = {
      'launch output': launch.stdout + launch.stderr,
      'ls -o json': ls.stdout,
      'status -o json': status.stdout,
      'berth.db (+ -wal, -shm)': databaseBytes(),
      'agentctl.log': readFileSync(join(sessionDir, 'agentctl.log'), 'utf8'),
      '.git/config': readFileSync(join(sessionDir, 'repo', '.git', 'config'), 'utf8'),
      'controller log': serveOutput(),
    };
    for (const [place, text] of Object.entries(places)) expect(text.includes(SECRET), `${place} must not contain the credential`).toBe(false);

    const rm = await runCli(['rm', view.id], { dataDir });
    expect(rm.code, rm.stderr).toBe(0);
    expect(await secretIds(), 'rm deletes the credential').not.toContain(`repo-credential-${view.id}`);
  });

  it('fails the workspace stage on wrong credentials with a message that does not contain them', async () => {
    const launch = await runCli(['launch', '--repo', url(WRONG), '--agent', 'demo', '--env', 'BERTH_DEMO_STEP_MS=0'], { dataDir });
    expect(launch.code).toBe(1);
    expect(launch.stderr).toMatch(/failed at stage workspace: repository\.url: git clone of http:\/\/127\.0\.0\.1:\d+\/repo\.git failed: .*Authentication failed/);
    expect(launch.stderr).toContain('check the credentials in the repository URL');
    const id = /session (s-[0-9a-f]+) failed/.exec(launch.stderr)?.[1] ?? '';
    expect(id).not.toBe('');

    const status = await runCli(['status', id, '-o', 'json'], { dataDir });
    const view = JSON.parse(status.stdout) as View;
    expect(view.state).toBe('failed');
    expect(view.error?.stage).toBe('workspace');
    for (const [place, text] of Object.entries({
      'launch output': launch.stdout + launch.stderr,
      'status -o json': status.stdout,
      'berth.db (+ -wal, -shm)': databaseBytes(),
      'controller log': serveOutput(),
    })) {
      expect(text.includes(WRONG), `${place} must not contain the credential`).toBe(false);
    }
    expect(existsSync(join(dataDir, 'workspaces', id)), 'the rollback removed the workspace').toBe(false);
    expect(await secretIds(), 'the failed session keeps its credential (resume clones again)').toContain(`repo-credential-${id}`);

    expect((await runCli(['rm', id], { dataDir })).code).toBe(0);
    expect(await secretIds()).not.toContain(`repo-credential-${id}`);
  });

  it('passes --secret-env values from the controller environment to the agent without storing them', async () => {
    const launch = await runCli(['launch', '--repo', url(SECRET), '--agent', 'demo', '--env', 'BERTH_DEMO_STEP_MS=0', '--secret-env', 'BERTH_IT_SECRET_VALUE', '-d'], { dataDir });
    expect(launch.code, launch.stderr).toBe(0);
    const id = launch.stdout.trim();
    let state = '';
    for (let i = 0; i < 100 && !['ready', 'failed'].includes(state); i++) {
      state = (JSON.parse((await runCli(['status', id, '-o', 'json'], { dataDir })).stdout) as View).state;
      if (state === 'launching') await new Promise((r) => setTimeout(r, 200));
    }
    expect(state).toBe('ready');
    const echo = await runCli(['exec', id, '--', 'sh', '-c', 'printf %s "$BERTH_IT_SECRET_VALUE"'], { dataDir });
    expect(echo.stdout).toBe(SECRET_ENV_VALUE);
    expect(databaseBytes().includes(SECRET_ENV_VALUE), 'secret env values are never stored').toBe(false);
    expect((await runCli(['rm', id], { dataDir })).code).toBe(0);
  });

  it('names secretEnv.NAME when the controller does not have an approved variable', async () => {
    const r = await runCli(['launch', '--repo', url(SECRET), '--secret-env', 'BERTH_IT_NOT_SET_ANYWHERE'], { dataDir });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('secretEnv.BERTH_IT_NOT_SET_ANYWHERE: is not set in the controller environment');
  });

  it('rejects a --secret-env value given as K=V before calling the controller', async () => {
    const r = await runCli(['launch', '--repo', url(SECRET), '--secret-env', 'TOKEN=abc'], { dataDir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--secret-env: expected an environment variable name, got 'TOKEN=abc'");
  });
});
