/**
 * Contract cases on the life of an instance: status across a stop, a revive on the kept workspace,
 * destroy, idempotent stops, and failed launches (bad repository, failing setup script, a rejected
 * checkpoint), each of which must roll back everything and release the provisional row once.
 * @module
 */
import { it, type ExpectStatic } from 'vitest';
import { isLaunchError } from '../../src/executors/launch-kit/index.js';
import { persistentMetadata } from '../../src/inventory/records.js';
import { outputOf, runProcess, stageProblems } from './recording.js';
import { CONTRACT_CASES, ownPrefix, stoppedLike, type ContractCase, type ContractRun, type ContractSubject, type Failed } from './run.js';

/** Cases that may be skipped, each with the check that the subject really lacks the capability. */
export const SKIPPABLE: Partial<Record<ContractCase, { capability: string; absent: (s: ContractSubject) => boolean }>> = {
  failingSetup: { capability: 'a setup script', absent: (s) => s.failingSetupProfile === undefined },
};

/** A failed fresh launch: a LaunchError naming the failed stage, everything undone, the row released once. */
async function expectRolledBack(expect: ExpectStatic, run: ContractRun, f: Failed): Promise<void> {
  expect(isLaunchError(f.error), `a LaunchError, got: ${String(f.error)}`).toBe(true);
  if (!isLaunchError(f.error)) return;
  expect(f.error.rollbackErrors, 'the rollback completed').toEqual([]);
  expect(stageProblems(f.rec.stages)).toEqual([]);
  expect(f.rec.stages.at(-1), 'the last stage event is the failure').toMatchObject({ stage: f.error.stage, status: 'failed' });
  expect(f.rec.stages.filter((e) => e.status === 'failed')).toHaveLength(1);
  expect(f.rec.checkpoints.map((c) => c.state)).not.toContain('ready');
  expect(f.rec.released, 'the provisional row is released exactly once').toBe(1);
  expect(await run.subject.held(f.req.identity.sessionId), 'the rollback removed everything').toEqual([]);
  expect(`${f.error.message} ${JSON.stringify(f.rec.stages)}`.includes(run.secretValue), 'no secret in the error').toBe(false);
}

export function lifecycleCases(run: ContractRun, skipped: ReadonlyMap<ContractCase, string>): void {
  it(CONTRACT_CASES.status, async ({ expect }) => {
    const l = await run.launch('status');
    const target = run.targetOf(l);
    const { executor } = run.subject;
    expect((await executor.status(target)).liveness).toBe('running');
    await l.instance.close();
    expect((await executor.status(target)).liveness, 'closing a connection stops nothing').toBe('running');
    // as `berth stop` does it: with the connected control client (the idempotent case stops without one)
    const connected = run.track(await executor.createInstance(run.reviveRequest(l, run.recorder(l.req.identity.sessionId))), l.req.profile);
    await executor.stopInstance({ ...target, control: connected.control }, { destroy: false, reason: 'contract' });
    await connected.close();
    const after = await executor.status(target);
    expect(stoppedLike(after), `after a stop: ${after.liveness} (${after.detail})`).toBe(true);
  });

  it(CONTRACT_CASES.revive, async ({ expect }) => {
    const l = await run.launch('revive');
    const { executor } = run.subject;
    const wrote = await runProcess(l.instance.client, ['sh', '-c', 'echo kept > contract-kept.txt && echo before-stop']);
    expect(wrote.exitCode).toBe(0);
    await l.instance.close();
    await executor.stopInstance(run.targetOf(l), { destroy: false, reason: 'contract' });
    const rec = run.recorder(l.req.identity.sessionId);
    const again = run.track(await executor.createInstance(run.reviveRequest(l, rec)), l.req.profile);
    expect(again.revived, 'the stopped instance was started again').toBe(true);
    expect(again.identity).toEqual(l.instance.identity);
    // a nonce is used once per agentctl: the recorded one may have been read by what ran before
    expect(again.secrets.bootstrapNonce.length, 'agentctl is restarted with a nonce').toBeGreaterThanOrEqual(32);
    expect(again.secrets.bootstrapNonce, 'agentctl is restarted with a fresh nonce, not the recorded one').not.toBe(l.instance.secrets.bootstrapNonce);
    expect(stageProblems(rec.stages)).toEqual([]);
    expect(rec.checkpoints.map((c) => c.state)).not.toContain('ready');
    expect(rec.released).toBe(0);
    expect(persistentMetadata(again.metadata, ownPrefix(run))).toEqual(again.metadata);
    const held = await run.subject.held(l.req.identity.sessionId);
    for (const h of held) expect(Object.values(again.metadata), `the revived metadata records ${h.what}`).toContain(h.recordedAs);
    expect((await runProcess(again.client, ['cat', 'contract-kept.txt'])).stdout, 'the workspace was kept, not cloned again').toBe('kept\n');
    expect(await again.client.getProcess(wrote.id), 'the earlier process is still listed').toMatchObject({ id: wrote.id, status: 'exited', exit_code: 0 });
    expect(await outputOf(again.client, wrote.id), 'with its output').toBe('before-stop\n');
    expect((await executor.status({ identity: again.identity, metadata: again.metadata, profile: l.req.profile })).liveness).toBe('running');
  });

  it(CONTRACT_CASES.destroy, async ({ expect }) => {
    const l = await run.launch('destroy');
    expect(l.held.length).toBeGreaterThan(0);
    await l.instance.close();
    await run.subject.executor.stopInstance(run.targetOf(l), { destroy: true, reason: 'contract' });
    expect(await run.subject.held(l.req.identity.sessionId), 'nothing is left').toEqual([]);
    const after = await run.subject.executor.status(run.targetOf(l));
    expect(stoppedLike(after), `after a destroy: ${after.liveness} (${after.detail})`).toBe(true);
  });

  it(CONTRACT_CASES.idempotentStop, async ({ expect }) => {
    const l = await run.launch('idem');
    await l.instance.close();
    const target = run.targetOf(l);
    const { executor } = run.subject;
    await executor.stopInstance(target, { destroy: false, reason: 'contract' });
    await executor.stopInstance(target, { destroy: false, reason: 'contract' });
    expect(stoppedLike(await executor.status(target))).toBe(true);
    await executor.stopInstance(target, { destroy: true, reason: 'contract' });
    await executor.stopInstance(target, { destroy: true, reason: 'contract' });
    expect(await run.subject.held(l.req.identity.sessionId)).toEqual([]);
    expect(stoppedLike(await executor.status(target))).toBe(true);
  });

  it(CONTRACT_CASES.badRepository, async ({ expect }) => {
    const { req, rec } = run.request('badrepo', { repository: run.subject.badRepository });
    await expectRolledBack(expect, run, await run.launchFailing(req, rec));
  });

  const setupSkip = skipped.get('failingSetup');
  if (setupSkip === undefined) {
    it(CONTRACT_CASES.failingSetup, async ({ expect }) => {
      const profile = run.subject.failingSetupProfile;
      expect(profile, `${run.name} declares a setup script`).toBeDefined();
      const { req, rec } = run.request('badsetup', { profile: profile! });
      await expectRolledBack(expect, run, await run.launchFailing(req, rec));
    });
  } else {
    it(`${CONTRACT_CASES.failingSetup} — skipped by ${run.name}: ${setupSkip}`, ({ expect }) => {
      const { capability, absent } = SKIPPABLE.failingSetup!;
      expect(absent(run.subject), `${run.name} skips the case, so it must have no ${capability}`).toBe(true);
    });
  }

  it(CONTRACT_CASES.checkpointFailure, async ({ expect }) => {
    // the last checkpoint of a launch: the moment the most has been created
    const count = (await run.shared).rec.checkpoints.length;
    const { req, rec } = run.request('cpfail');
    const record = req.checkpointRuntimeInventory;
    let n = 0;
    req.checkpointRuntimeInventory = async (cp) => {
      await record(cp);
      if (++n === count) throw new Error('contract: the inventory refused the checkpoint');
    };
    const f = await run.launchFailing(req, rec);
    await expectRolledBack(expect, run, f);
    expect(String((f.error as Error).message)).toContain('the inventory refused the checkpoint');
  });
}
