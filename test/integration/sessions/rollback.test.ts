/**
 * The local executor's rollback of a failed fresh launch: every step runs under the rollback's own
 * deadline, and the provisional runtime row is released only when the workspace is really gone.
 * @module
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateInstanceRequest } from '../../../src/executors/executor.js';
import { isLaunchError } from '../../../src/executors/launch-kit/index.js';
import { LocalExecutor } from '../../../src/executors/local/index.js';
import { cleanup, killLeftovers, makeRepo, tempDir } from './helpers.js';

describe('LocalExecutor rollback', () => {
  let work: string;
  let dataDir: string;
  let repo: string;
  let stubborn: string;

  beforeAll(() => {
    work = tempDir('rollback');
    dataDir = join(work, 'data');
    repo = makeRepo(work, 'repo', 'rollback');
    // an "agentctl" that never answers /health and ignores SIGTERM: its stop takes the whole grace
    stubborn = join(work, 'stubborn-agentctl.cjs');
    writeFileSync(stubborn, "process.on('SIGTERM', () => undefined);\nsetInterval(() => undefined, 1000);\n");
  });

  afterAll(() => {
    killLeftovers(dataDir);
    cleanup(work);
  });

  function request(sessionId: string, released: { n: number }): CreateInstanceRequest {
    return {
      identity: { instanceId: `${sessionId}-i1`, sessionId, taskId: sessionId, environmentId: sessionId },
      repository: { path: repo },
      env: {},
      secretEnv: {},
      profile: { executor: 'local', profile: null, type: 'local', settings: {}, env: {} },
      onStage: () => undefined,
      checkpointRuntimeInventory: () => Promise.resolve(),
      releaseRuntimeInventory: () => {
        released.n++;
        return Promise.resolve();
      },
    };
  }

  it('keeps the row (and says why) when a step outlasts the rollback deadline: the workspace was not removed', async () => {
    const exec = new LocalExecutor({ dataDir, agentctlPath: stubborn, healthTimeoutMs: 300, rollbackTimeoutMs: 1500 });
    const released = { n: 0 };
    const err = await exec.createInstance(request('s-deadline', released)).then(
      () => null,
      (e: unknown) => e,
    );
    expect(isLaunchError(err)).toBe(true);
    expect(released.n, 'the row must not be released while the workspace exists').toBe(0);
    expect(existsSync(join(dataDir, 'workspaces', 's-deadline'))).toBe(true);
    const rollbackErrors = isLaunchError(err) ? err.rollbackErrors.map(String).join('\n') : '';
    expect(rollbackErrors).toMatch(/rollback deadline of 1500 ms/);
  }, 30_000);

  it('removes the workspace, then releases the row, when every step succeeds', async () => {
    const exec = new LocalExecutor({ dataDir, agentctlPath: join(work, 'no-such-agentctl.cjs') });
    const released = { n: 0 };
    await expect(exec.createInstance(request('s-clean', released))).rejects.toMatchObject({ reason: 'AgentctlMissing' });
    expect(existsSync(join(dataDir, 'workspaces', 's-clean'))).toBe(false);
    expect(released.n).toBe(1);
  });
});
