/**
 * What an agent can reach on one machine: only its base environment plus what the launch approved,
 * and, inside the bubblewrap sandbox, only its own workspace — not the data dir's secrets, not other
 * sessions, not the host's /tmp, and nothing outside writable. Also the inventory files' modes.
 * @module
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createController, type Controller } from '../../../src/controller/index.js';
import { probeBubblewrap } from '../../../src/executors/local/index.js';
import {
  agentctlBundle,
  execText,
  FAST_AGENT_ENV,
  makeRepo,
  restoreEnv,
  startController,
  teardownController,
  tempDir,
  testConfig,
  until,
  waitForOutput,
} from './helpers.js';

const LEAKED = 'controller-only-value-7f3a';

/** Live processes started for session `id` (the agent and exec'd ones carry BERTH_SESSION_ID). */
function sessionProcesses(id: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(`BERTH_SESSION_ID=${id}`)) out.push(Number(name));
    } catch {
      // gone
    }
  }
  return out;
}
const APPROVED = 'approved-value-19c2';

describe('local session isolation', () => {
  let work: string;
  let dataDir: string;
  let c: Controller | undefined;
  let a: string;
  let b: string;
  const saved = { MY_SECRET: process.env.MY_SECRET, OK_SECRET: process.env.OK_SECRET };

  beforeAll(async () => {
    // The sandbox must really be in effect here: a machine without it fails this suite, loudly.
    expect(probeBubblewrap(), 'bubblewrap must work on the test machine (test/cluster/install-deps.sh installs it)').toMatchObject({ ok: true });
    work = tempDir('isolation');
    dataDir = join(work, 'data');
    // in the controller's own environment, as with `MY_SECRET=x berth serve`
    process.env.MY_SECRET = LEAKED;
    process.env.OK_SECRET = APPROVED;
    c = await createController({ dataDir, agentctlPath: agentctlBundle(work), config: testConfig({ sleeper: { command: ['sh', '-c', 'echo agent started; exec sleep 600'] } }, { executors: { local: { type: 'local', secret_env: ['OK_SECRET'] } } }), env: { ...process.env } });
    await c.recover();
    const repo = makeRepo(work, 'repo', 'isolation');
    a = (await c.launch({ repository: { path: repo }, agent: 'sleeper', secretEnv: ['OK_SECRET'] })).id;
    b = (await c.launch({ repository: { path: repo }, env: FAST_AGENT_ENV })).id;
    for (const id of [a, b]) expect((await c.waitUntilSettled(id)).state).toBe('ready');
  }, 60_000);

  afterAll(async () => {
    restoreEnv(saved);
    await teardownController(c, dataDir, work);
  });

  const sh = async (id: string, script: string) => execText(c!, id, ['sh', '-c', script]);

  it('gives exec only the base env plus approved secrets: an unapproved controller variable is absent', async () => {
    expect((await sh(b, 'echo "[$MY_SECRET][$OK_SECRET]"')).stdout.trim()).toBe('[][]');
    expect((await sh(a, 'echo "[$MY_SECRET][$OK_SECRET]"')).stdout.trim()).toBe(`[][${APPROVED}]`);
    const names = (await sh(b, 'env | cut -d= -f1 | sort')).stdout.trim().split('\n');
    expect(names.filter((n) => n.startsWith('AGENTCTL_')), 'no agentctl setting (nor the nonce) reaches a process').toEqual([]);
    expect(names).toContain('PATH');
  });

  it('starts the agent without the unapproved variable (its /proc/<pid>/environ)', async () => {
    await waitForOutput(c!, a, /agent started/);
    const pids = await until(() => {
      const found = sessionProcesses(a);
      return found.length > 0 ? found : undefined;
    }, 'the agent process of session a');
    for (const pid of pids) {
      const environ = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      expect(environ.some((e) => e.startsWith('MY_SECRET='))).toBe(false);
      expect(environ).toContain(`OK_SECRET=${APPROVED}`);
    }
  });

  it('hides the data dir: the API token, secret key and database are unreadable by path from the workspace', async () => {
    expect(existsSync(join(dataDir, 'state', 'api-token')) || existsSync(join(dataDir, 'state', 'berth.db'))).toBe(true);
    for (const path of ['../../../api-token', '../../../state/api-token', '../../../state/secret.key', join(dataDir, 'state', 'berth.db'), join(dataDir, 'state', 'secret.key')]) {
      const r = await sh(a, `cat '${path}' >/dev/null 2>&1 && echo readable || echo hidden`);
      expect(r.stdout.trim(), path).toBe('hidden');
    }
    expect((await sh(a, `ls -A '${dataDir}'`)).stdout.split('\n'), 'the data dir shows nothing but the path to this workspace').not.toContain('state');
  });

  it("does not show other sessions' workspaces", async () => {
    const other = (await c!.get(b)).workspacePath!;
    expect(existsSync(join(other, 'BERTH_MARKER')), 'the other workspace exists outside').toBe(true);
    expect((await sh(a, `test -e '${join(other, 'BERTH_MARKER')}' && echo visible || echo invisible`)).stdout.trim()).toBe('invisible');
    expect((await sh(a, `ls -A '${join(dataDir, 'workspaces')}'`)).stdout.trim().split('\n')).toEqual([a]);
  });

  it('keeps the workspace writable, /tmp private and the rest of the file system read-only', async () => {
    const view = await c!.get(a);
    expect((await sh(a, 'echo hi > written-by-agent && cat written-by-agent')).stdout.trim()).toBe('hi');
    expect(readFileSync(join(view.workspacePath!, 'written-by-agent'), 'utf8')).toBe('hi\n');

    const hostMarker = join(work, 'host-tmp-marker');
    writeFileSync(hostMarker, 'host');
    expect((await sh(a, `test -e '${hostMarker}' && echo visible || echo private`)).stdout.trim()).toBe('private');
    expect((await sh(a, 'echo x > /tmp/berth-isolation-probe && echo ok')).stdout.trim()).toBe('ok');
    expect(existsSync('/tmp/berth-isolation-probe'), "the agent's /tmp is not the host's").toBe(false);

    expect((await sh(a, 'touch /usr/berth-isolation-probe 2>/dev/null && echo writable || echo read-only')).stdout.trim()).toBe('read-only');
    expect((await sh(a, 'touch /etc/berth-isolation-probe 2>/dev/null && echo writable || echo read-only')).stdout.trim()).toBe('read-only');
    // the test's own dir is under /tmp: inside it is only the private tmpfs, whatever is written there stays inside
    await sh(a, `echo x > '${join(work, 'outside-probe')}'`);
    expect(existsSync(join(work, 'outside-probe'))).toBe(false);
  });

  it("cannot see or signal the controller's processes (own pid namespace)", async () => {
    const r = await sh(a, `kill -0 ${process.pid} 2>/dev/null && echo reachable || echo unreachable`);
    expect(r.stdout.trim()).toBe('unreachable');
  });
});

describe('inventory file modes', () => {
  it('creates berth.db, its -wal/-shm and secret.key with mode 0600 under umask 000', async () => {
    const work = tempDir('umask');
    const dataDir = join(work, 'data');
    const old = process.umask(0);
    let c: Controller | undefined;
    try {
      c = await startController(dataDir, agentctlBundle(work));
      const id = (await c.launch({ repository: { path: makeRepo(work, 'repo', 'umask') }, env: FAST_AGENT_ENV })).id;
      expect((await c.waitUntilSettled(id)).state).toBe('ready');
      for (const f of ['berth.db', 'berth.db-wal', 'berth.db-shm', 'secret.key']) {
        const path = join(dataDir, 'state', f);
        expect(existsSync(path), `${f} exists`).toBe(true);
        expect((statSync(path).mode & 0o777).toString(8), f).toBe('600');
      }
      expect((statSync(join(dataDir, 'state')).mode & 0o777).toString(8)).toBe('700');
    } finally {
      process.umask(old);
      await teardownController(c, dataDir, work);
    }
  }, 60_000);
});
