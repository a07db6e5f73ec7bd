import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { CreateInstanceRequest, RuntimeCheckpoint, StageEvent } from '../../../src/executors/executor.js';
import { LaunchError } from '../../../src/executors/launch-kit/index.js';
import { LocalExecutor } from '../../../src/executors/local/index.js';
import { agentctlBundle, agentctlPids, cleanup, killLeftovers, makeRepo, tempDir } from './helpers.js';

describe('LocalExecutor (the Executor contract on real processes)', () => {
  let work: string;
  let dataDir: string;
  let exec: LocalExecutor;
  let repo: string;

  beforeAll(() => {
    work = tempDir('local-exec');
    dataDir = join(work, 'data');
    exec = new LocalExecutor({ dataDir, agentctlPath: agentctlBundle(work) });
    repo = makeRepo(work, 'repo', 'marker');
  });

  afterAll(() => {
    const leaked = killLeftovers(dataDir);
    cleanup(work);
    expect(leaked).toBe(0);
  });

  function request(sessionId: string, recorder: { stages: StageEvent[]; checkpoints: RuntimeCheckpoint[]; released: number }): CreateInstanceRequest {
    return {
      identity: { instanceId: `${sessionId}-i1`, sessionId, taskId: sessionId, environmentId: sessionId },
      repository: { path: repo },
      env: { FROM_REQUEST: '1' },
      secretEnv: { API_KEY: 'secret-value-not-persisted' },
      profile: { executor: 'local', profile: null, type: 'local', settings: {}, env: {} },
      onStage: (e) => recorder.stages.push(e),
      checkpointRuntimeInventory: async (cp) => {
        recorder.checkpoints.push(cp);
      },
      releaseRuntimeInventory: async () => {
        recorder.released++;
      },
    };
  }

  it('creates, reports status, stops (keep), revives with a fresh nonce, refreshes and destroys', async () => {
    const rec = { stages: [] as StageEvent[], checkpoints: [] as RuntimeCheckpoint[], released: 0 };
    const req = request('s-contract', rec);
    const inst = await exec.createInstance(req);
    expect(rec.checkpoints.map((c) => c.state)).toEqual(['workspace_created', 'agentctl_started', 'agentctl_connected']);
    expect(rec.checkpoints.map((c) => c.state), 'the executor never writes ready itself (spec §4.8)').not.toContain('ready');
    expect(JSON.stringify(rec.checkpoints)).not.toContain(inst.secrets.authToken);
    expect(JSON.stringify(rec.checkpoints)).not.toContain(inst.secrets.bootstrapNonce);
    expect(JSON.stringify(rec.checkpoints)).not.toContain('secret-value-not-persisted');
    expect(rec.stages.filter((s) => s.status === 'succeeded').map((s) => s.stage)).toEqual(['workspace', 'agentctl_start', 'agentctl_connect']);
    expect(inst.workspacePath).toBe(join(dataDir, 'workspaces', 's-contract', 'repo'));
    expect(inst.revived).toBe(true);
    const env = await inst.client.startProcess({ command: ['sh', '-c', 'echo $FROM_REQUEST $API_KEY $BERTH_SESSION_ID'] });
    let out = '';
    for await (const msg of inst.client.streamOutput(env.id)) {
      if (msg.type === 'output') out += Buffer.from(msg.chunk.data, 'base64').toString();
    }
    expect(out, 'request env, approved secret env and identity reach the processes').toBe('1 secret-value-not-persisted s-contract\n');
    const target = { identity: inst.identity, metadata: inst.metadata };
    expect((await exec.status(target)).liveness).toBe('running');

    // stop, keep the workspace
    await exec.stopInstance(target, { destroy: false, reason: 'test' });
    expect((await exec.status(target)).liveness).toBe('stopped');
    expect(existsSync(inst.workspacePath)).toBe(true);
    expect(agentctlPids(dataDir)).toEqual([]);

    // revive: a new agentctl with a fresh nonce (the recorded one was readable by what ran), the same instance id
    const revived = await exec.createInstance({ ...req, previous: { metadata: inst.metadata, secrets: inst.secrets } });
    expect(revived.revived).toBe(true);
    expect(revived.secrets.bootstrapNonce).toMatch(/^[0-9a-f]{64}$/);
    expect(revived.secrets.bootstrapNonce).not.toBe(inst.secrets.bootstrapNonce);
    expect((await revived.control.getInstance(inst.identity.instanceId)).workspace_path).toBe(inst.workspacePath);

    // refresh of a live instance: a pure reconnect, nothing new started
    const pidsBefore = agentctlPids(dataDir);
    const refreshed = await exec.refreshInstance(revived, {
      onStage: () => undefined,
      checkpointRuntimeInventory: async () => undefined,
      env: {},
      secretEnv: {},
      profile: { executor: 'local', profile: null, type: 'local', settings: {}, env: {} },
    });
    expect(refreshed.revived).toBe(false);
    expect(agentctlPids(dataDir)).toEqual(pidsBefore);

    await exec.stopInstance({ identity: refreshed.identity, metadata: refreshed.metadata }, { destroy: true, reason: 'test' });
    expect((await exec.status({ identity: refreshed.identity, metadata: refreshed.metadata })).liveness).toBe('missing');
    expect(existsSync(join(dataDir, 'workspaces', 's-contract'))).toBe(false);
    expect(rec.released, 'a successful launch releases nothing').toBe(0);
  });

  it('rolls back exactly what it created and releases the provisional row when agentctl cannot start', async () => {
    const broken = new LocalExecutor({ dataDir, agentctlPath: join(work, 'no-such-agentctl.cjs') });
    const rec = { stages: [] as StageEvent[], checkpoints: [] as RuntimeCheckpoint[], released: 0 };
    const err = await broken.createInstance(request('s-broken', rec)).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(LaunchError);
    expect((err as LaunchError).stage).toBe('agentctl_start');
    expect((err as LaunchError).reason).toBe('AgentctlMissing');
    expect(rec.checkpoints.map((c) => c.state)).toEqual(['workspace_created']);
    expect(rec.released).toBe(1);
    expect(existsSync(join(dataDir, 'workspaces', 's-broken'))).toBe(false);
  });

  it('keeps the provisional row when a checkpoint write fails, after removing what it created', async () => {
    const rec = { stages: [] as StageEvent[], checkpoints: [] as RuntimeCheckpoint[], released: 0 };
    const req = request('s-cpfail', rec);
    let n = 0;
    req.checkpointRuntimeInventory = async (cp) => {
      rec.checkpoints.push(cp);
      if (++n === 2) throw new Error('disk full');
    };
    const err = await exec.createInstance(req).then(() => null, (e: unknown) => e);
    expect((err as LaunchError).stage).toBe('agentctl_start');
    expect((err as Error).message).toContain('disk full');
    expect(agentctlPids(dataDir), 'the agentctl it started is stopped').toEqual([]);
    expect(existsSync(join(dataDir, 'workspaces', 's-cpfail'))).toBe(false);
    expect(rec.released).toBe(1);
  });
});
