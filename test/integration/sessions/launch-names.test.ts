/**
 * Names a launch gives, through the API of a real `berth serve` (issue 18, items 6 and 14): a
 * secret is passed only when berth.yaml approves its name (`secret_env`), and the refusal of any
 * other name says nothing about serve's environment; agent, executor and profile names are looked
 * up as the config's own entries only, so `constructor` or `__proto__` is a 400 naming the field
 * before anything (a session row, a repository credential) is stored.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InventoryStore } from '../../../src/inventory/index.js';
import { ensureBuilt, removeSessionsAndStop, runCli, startServeProcess } from '../cli/helpers.js';
import { startGitHttpServer, type GitHttpServer } from '../support/git-http.js';
import { cleanup, killLeftovers, makeRepo, tempDir, until } from './helpers.js';

const CONFIG = `executors:
  local:
    type: local
    secret_env: [BERTH_IT_APPROVED]
profiles:
  keyed:
    executor: local
    secret_env: [BERTH_IT_PROFILE_KEY]
`;
const APPROVED_VALUE = 'approved-value-5e1d';
const PROFILE_VALUE = 'profile-value-77c0';
const PASSWORD = 'p4ss-never-stored';

interface ErrorBody {
  error: { code: string; message: string; field?: string };
}

describe('launch names: approved secrets and own config entries only', () => {
  let work: string;
  let dataDir: string;
  let repo: string;
  let git: GitHttpServer;
  let serve: ChildProcess | undefined;
  let base: string;
  let token: string;

  beforeAll(async () => {
    ensureBuilt();
    work = tempDir('launch-names');
    dataDir = join(work, 'data');
    repo = makeRepo(work, 'repo', 'names');
    execFileSync('git', ['clone', '-q', '--bare', repo, join(work, 'served', 'repo.git')], { stdio: 'ignore' });
    git = await startGitHttpServer(join(work, 'served'), { user: 'user', password: PASSWORD });
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'berth.yaml'), CONFIG);
    const started = await startServeProcess(dataDir, [], {
      BERTH_IT_APPROVED: APPROVED_VALUE,
      BERTH_IT_PROFILE_KEY: PROFILE_VALUE,
      BERTH_IT_UNLISTED_SET: 'unlisted-value',
    });
    serve = started.child;
    base = `http://127.0.0.1:${started.port}`;
    token = readFileSync(join(dataDir, 'state', 'api-token'), 'utf8').trim();
  });

  afterAll(async () => {
    await removeSessionsAndStop(dataDir, serve);
    await git?.close();
    const leaked = killLeftovers(dataDir);
    cleanup(work);
    expect(leaked).toBe(0);
  });

  const launch = (body: Record<string, unknown>) =>
    fetch(`${base}/api/v1/sessions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ env: { BERTH_DEMO_STEP_MS: '0' }, ...body }),
    });
  const sessions = async () => ((await (await fetch(`${base}/api/v1/sessions`, { headers: { authorization: `Bearer ${token}` } })).json()) as { sessions: { id: string }[] }).sessions;
  const secretIds = async () => {
    const store = InventoryStore.open({ dataDir });
    try {
      return await store.listSecretIds();
    } finally {
      await store.close();
    }
  };

  async function refused(body: Record<string, unknown>): Promise<ErrorBody['error']> {
    const res = await launch(body);
    const json = (await res.json()) as ErrorBody;
    expect(res.status, JSON.stringify(json)).toBe(400);
    return json.error;
  }

  it("refuses a secret berth.yaml does not approve with one message, whether serve's environment has it or not", async () => {
    const home = await refused({ repository: { path: repo }, secretEnv: ['HOME'] });
    const set = await refused({ repository: { path: repo }, secretEnv: ['BERTH_IT_UNLISTED_SET'] });
    const unset = await refused({ repository: { path: repo }, secretEnv: ['BERTH_IT_NEVER_SET'] });
    const expected = (name: string) => ({
      code: 'bad_request',
      field: `secretEnv.${name}`,
      message: `secretEnv.${name}: is not an approved secret for executor 'local' (add it to executors.local.secret_env in berth.yaml)`,
    });
    expect(home).toEqual(expected('HOME'));
    expect(set).toEqual(expected('BERTH_IT_UNLISTED_SET'));
    expect(unset).toEqual(expected('BERTH_IT_NEVER_SET'));
    // a profile's secret is approved for that profile only
    expect(await refused({ repository: { path: repo }, secretEnv: ['BERTH_IT_PROFILE_KEY'] })).toEqual(expected('BERTH_IT_PROFILE_KEY'));
    expect(await sessions()).toEqual([]);
  });

  it('passes approved secrets (the executor’s and the profile’s) to the agent', async () => {
    const res = await launch({ repository: { path: repo }, executor: 'keyed', secretEnv: ['BERTH_IT_APPROVED', 'BERTH_IT_PROFILE_KEY'] });
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    await until(async () => {
      const r = await runCli(['status', id, '-o', 'json'], { dataDir });
      const state = (JSON.parse(r.stdout) as { state: string }).state;
      if (state === 'failed') throw new Error(`launch failed: ${r.stdout}`);
      return state === 'ready' ? true : undefined;
    }, 'the session to be ready');
    expect((await runCli(['exec', id, '--', 'printenv', 'BERTH_IT_APPROVED'], { dataDir })).stdout).toBe(`${APPROVED_VALUE}\n`);
    expect((await runCli(['exec', id, '--', 'printenv', 'BERTH_IT_PROFILE_KEY'], { dataDir })).stdout).toBe(`${PROFILE_VALUE}\n`);
    const unlisted = await runCli(['exec', id, '--', 'printenv', 'BERTH_IT_UNLISTED_SET'], { dataDir });
    expect(unlisted.stdout, 'an unapproved variable never reaches the agent').toBe('');
    expect((await runCli(['rm', id], { dataDir })).code).toBe(0);
  });

  it.each([
    ['agent', 'constructor'],
    ['agent', '__proto__'],
    ['agent', 'toString'],
    ['executor', 'constructor'],
    ['executor', '__proto__'],
    ['executor', 'toString'],
  ])('refuses %s %j with a 400 naming the field, storing nothing (no session, no credential)', async (field, name) => {
    const url = `http://user:${PASSWORD}@127.0.0.1:${git.port}/repo.git`;
    const error = await refused({ repository: { url }, [field]: name });
    expect(error.field).toBe(field);
    expect(error.message).toMatch(field === 'agent' ? `agent: unknown agent '${name}' (configured: demo, demo-acp, claude, codex, gemini, opencode)` : `executor: unknown executor or profile '${name}'`);
    expect(await sessions()).toEqual([]);
    expect(await secretIds(), 'no repository credential is stored').toEqual([]);
  });
});
