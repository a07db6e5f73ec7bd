/**
 * Contract cases on a running instance: what a fresh launch reports and records (stages,
 * checkpoints, metadata, secrets, environment), and connecting to it again — a second connection
 * with the recorded metadata, a refresh after close(), a new executor after the old one closed.
 * Most of them inspect the run's one shared launch.
 * @module
 */
import { it, type ExpectStatic } from 'vitest';
import type { ExecutorInstance } from '../../src/executors/executor.js';
import { persistentMetadata } from '../../src/inventory/records.js';
import { checkpointStages, outputOf, runProcess, stageNames, stageProblems } from './recording.js';
import { CONTRACT_CASES, CONTROLLER_ONLY, ownPrefix, recordedValues, SEPARATOR, type ContractRun, type Launched } from './run.js';

/** What a second connection to a running instance must see: the earlier processes, nothing restarted. */
async function expectSameInstance(
  expect: ExpectStatic,
  run: ContractRun,
  before: Launched & { sleeper: { id: string; pid: number | null } },
  again: ExecutorInstance,
): Promise<void> {
  expect(again.revived, 'nothing was (re)started').toBe(false);
  expect(again.identity).toEqual(before.instance.identity);
  expect(again.workspacePath).toBe(before.instance.workspacePath);
  const sleeper = await again.client.getProcess(before.sleeper.id);
  expect(sleeper, 'the earlier process still runs under the same agentctl').toMatchObject({ status: 'running', pid: before.sleeper.pid, orphaned: false });
  expect(recordedValues(await run.subject.held(before.req.identity.sessionId)), 'no object was replaced').toEqual(recordedValues(before.held));
  expect(persistentMetadata(again.metadata, ownPrefix(run))).toEqual(again.metadata);
}

export function runningCases(run: ContractRun): void {
  it(CONTRACT_CASES.fresh, async ({ expect }) => {
    const s = await run.shared;
    expect(s.instance.identity).toEqual(s.req.identity);
    expect(s.instance.executor).toBe(run.subject.executor.name);
    expect(s.instance.revived, 'a fresh launch created the instance').toBe(true);
    expect(s.instance.agentctlCommand.length).toBeGreaterThan(0);
    expect(s.probe.exitCode).toBe(0);
    const [cwd, marker] = s.probe.stdout.split(`${SEPARATOR}\n`);
    expect(cwd, 'processes start in the workspace').toBe(`${s.instance.workspacePath}\n`);
    expect(marker, 'the workspace holds the cloned repository').toBe(run.subject.marker.text);
  });

  it(CONTRACT_CASES.stages, async ({ expect }) => {
    const { rec } = await run.shared;
    expect(stageProblems(rec.stages)).toEqual([]);
    const names = stageNames(rec.stages);
    expect(names.length).toBeGreaterThan(0);
    for (const stage of names) {
      const events = rec.stages.filter((e) => e.stage === stage);
      expect(events[0]?.status, `${stage} starts running`).toBe('running');
      expect(events.at(-1)?.status, `${stage} ends succeeded`).toBe('succeeded');
    }
  });

  it(CONTRACT_CASES.checkpoints, async ({ expect }) => {
    const { rec, instance, held } = await run.shared;
    const cps = rec.checkpoints;
    expect(cps.length).toBeGreaterThan(0);
    for (const cp of cps) expect(['ready', 'stopped', 'failed'], `checkpoint ${cp.state} is provisional`).not.toContain(cp.state);
    // a checkpoint may come first as an intent (Kubernetes records what it is about to create, so a
    // crash right after the create still finds it); then it holds nothing yet
    expect(cps.some((cp) => cp.held.length > 0), 'a checkpoint follows a side effect').toBe(true);
    for (const cp of cps) {
      const values = Object.values(cp.metadata);
      for (const h of cp.held) expect(values, `checkpoint ${cp.state} records ${h.what}`).toContain(h.recordedAs);
    }
    const last = Object.values(cps.at(-1)!.metadata);
    for (const h of held) {
      expect(last, `${h.what} was recorded by the last checkpoint (nothing is created after it)`).toContain(h.recordedAs);
      expect(Object.values(instance.metadata), `the ready metadata records ${h.what}`).toContain(h.recordedAs);
    }
    // a checkpoint belongs to the stage whose side effect it records: its failure fails that stage
    expect(checkpointStages(rec.timeline).filter((c) => c.stage === null).map((c) => c.state), 'checkpoints written outside any stage').toEqual([]);
  });

  it(CONTRACT_CASES.metadata, async ({ expect }) => {
    const { rec, instance } = await run.shared;
    expect(persistentMetadata(instance.metadata, ownPrefix(run)), 'no key of the instance metadata is dropped or refused').toEqual(instance.metadata);
    for (const cp of rec.checkpoints) expect(persistentMetadata(cp.metadata, ownPrefix(run)), `checkpoint ${cp.state}`).toEqual(cp.metadata);
  });

  it(CONTRACT_CASES.secrets, async ({ expect }) => {
    const { rec, instance, probe, req } = await run.shared;
    expect(probe.stdout.split('\n'), 'the approved secret reaches processes').toContain(`CONTRACT_SECRET=${run.secretValue}`);
    expect(probe.stdout.split('\n'), 'the request env reaches processes').toContain('CONTRACT_REQUEST=from-request');
    const { authToken, bootstrapNonce } = instance.secrets;
    expect(authToken.length).toBeGreaterThan(0);
    expect(bootstrapNonce.length).toBeGreaterThan(0);
    const recorded = JSON.stringify({ checkpoints: rec.checkpoints.map((c) => c.metadata), metadata: instance.metadata, stages: rec.stages });
    const exposed = await run.subject.exposed(req.identity.sessionId);
    for (const [what, value] of Object.entries({ 'the secret env': run.secretValue, 'the auth token': authToken, 'the bootstrap nonce': bootstrapNonce })) {
      expect(recorded.includes(value), `${what} is not in the metadata, checkpoints or stage events`).toBe(false);
      expect(exposed.includes(value), `${what} is not in what the executor exposes`).toBe(false);
    }
    expect(probe.stdout.includes(authToken) || probe.stdout.includes(bootstrapNonce), 'agentctl secrets never reach a process').toBe(false);
  });

  it(CONTRACT_CASES.controllerEnv, async ({ expect }) => {
    const { probe } = await run.shared;
    const env = (probe.stdout.split(`${SEPARATOR}\n`)[2] ?? '').split('\n');
    expect(env.some((l) => l.startsWith('CONTRACT_REQUEST=')), 'the environment was read').toBe(true);
    expect(env.filter((l) => l.startsWith(`${CONTROLLER_ONLY}=`))).toEqual([]);
    expect(probe.stdout.includes(run.controllerValue)).toBe(false);
    expect(env.filter((l) => l.startsWith('AGENTCTL_')), "agentctl's own variables stay with agentctl").toEqual([]);
  });

  it(CONTRACT_CASES.reconnect, async ({ expect }) => {
    const s = await run.shared;
    const rec = run.recorder(s.req.identity.sessionId);
    const again = await run.subject.executor.createInstance(run.reviveRequest(s, rec));
    try {
      await expectSameInstance(expect, run, s, again);
      expect(await outputOf(again.client, s.probe.id), 'the earlier output is there').toBe(s.probe.stdout);
      expect(stageProblems(rec.stages)).toEqual([]);
      expect(rec.checkpoints.map((c) => c.state)).not.toContain('ready');
    } finally {
      await again.close();
    }
  });

  it(CONTRACT_CASES.refresh, async ({ expect }) => {
    const s = await run.shared;
    const rec = run.recorder(s.req.identity.sessionId);
    const second = await run.subject.executor.createInstance(run.reviveRequest(s, rec));
    await second.close();
    await second.close();
    const refreshed = await run.subject.executor.refreshInstance(second, { env: s.req.env, secretEnv: s.req.secretEnv, profile: s.req.profile, ...rec.refreshCallbacks() });
    try {
      await expectSameInstance(expect, run, s, refreshed);
      const echo = await runProcess(refreshed.client, ['sh', '-c', 'echo "$CONTRACT_SECRET"']);
      expect(echo.stdout, 'a refreshed connection runs processes with the session env').toBe(`${run.secretValue}\n`);
    } finally {
      await refreshed.close();
    }
  });

  it(CONTRACT_CASES.restart, async ({ expect }) => {
    const first = run.subject.reopen();
    const l = await run.launch('restart', first);
    const sleeper = await l.instance.client.startProcess({ command: ['sleep', '3600'] });
    await l.instance.close();
    await first.close();
    const next = run.subject.reopen();
    try {
      expect((await next.status(run.targetOf(l))).liveness, 'the instance outlives the executor that made it').toBe('running');
      const again = await next.createInstance(run.reviveRequest(l, run.recorder(l.req.identity.sessionId)));
      try {
        await expectSameInstance(expect, run, { ...l, sleeper: { id: sleeper.id, pid: sleeper.pid } }, again);
      } finally {
        await again.close();
      }
    } finally {
      await next.close();
    }
  });
}
