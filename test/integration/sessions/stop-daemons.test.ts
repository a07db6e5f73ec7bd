/**
 * A stop ends every process of the session (issue 18, item 11): an agent that leaves a daemon
 * behind with `setsid nohup … &` (outside its process group, with the session's secret env) has
 * none of it running once the session is stopped, with or without the bubblewrap sandbox.
 * @module
 */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { findInstallRoot, resolveConfig } from '../../../src/config/index.js';
import { createController, type Controller } from '../../../src/controller/index.js';
import { agentctlBundle, liveProcesses, makeRepo, ROOT, teardownController, tempDir, until, waitForOutput } from './helpers.js';

const DAEMON = ['sh', '-c', 'setsid nohup sleep 1000 >/dev/null 2>&1 </dev/null & echo agent started; exec sleep 600'];

/** Live `sleep 1000` processes carrying the session's BERTH_SESSION_ID. */
function sessionSleeps(sessionId: string): number[] {
  return liveProcesses((p) => p.argv().join(' ') === 'sleep 1000' && p.environ().includes(`BERTH_SESSION_ID=${sessionId}`));
}

describe.each(['bubblewrap', 'none'] as const)('stop of a local session (sandbox %s)', (sandbox) => {
  const work = tempDir(`stop-daemons-${sandbox}`);
  const dataDir = join(work, 'data');
  let c: Controller | undefined;

  afterAll(() => teardownController(c, dataDir, work, 'no process of the session may outlive it'));

  it('ends the setsid/nohup daemon the agent left behind', async () => {
    const config = resolveConfig(
      { executors: { local: { type: 'local', sandbox } }, agents: { daemonizer: { command: DAEMON } } },
      { source: null, installRoot: findInstallRoot(join(ROOT, 'src', 'config')) },
    );
    c = await createController({ dataDir, agentctlPath: agentctlBundle(work), config, env: {} });
    await c.recover();
    const { id } = await c.launch({ repository: { path: makeRepo(work, 'repo', 'stop-daemons') }, agent: 'daemonizer' });
    expect((await c.waitUntilSettled(id)).state).toBe('ready');
    await waitForOutput(c, id, /agent started/);
    const before = await until(() => (sessionSleeps(id).length > 0 ? sessionSleeps(id) : undefined), 'the daemon to start');
    expect(before.length).toBe(1);

    expect((await c.stop(id)).state).toBe('stopped');
    expect(sessionSleeps(id), 'the daemon is gone with the session').toEqual([]);
  }, 60_000);
});
