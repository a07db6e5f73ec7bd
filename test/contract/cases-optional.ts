/**
 * Contract cases of the optional executor methods (see `Executor` in src/executors/executor.ts):
 * each runs where the subject implements the method; an executor without it skips the case with a
 * reason, and in its place runs a case asserting that the method is really absent (the controller
 * then does without: no recorded logs of a stopped session, healing on the next command, no
 * unrecorded cleanup or sweep).
 * @module
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { it, type ExpectStatic } from 'vitest';
import type { Executor } from '../../src/executors/executor.js';
import { runProcess } from './recording.js';
import { CONTRACT_CASES, recordedValues, type ContractCase, type ContractRun, type ContractSubject } from './run.js';

/** The cases of the optional methods, each backed by its method: skippable where the subject lacks it. */
export const OPTIONAL_CASES = {
  removeUnrecorded: { capability: 'removeUnrecorded', absent: (s: ContractSubject) => s.executor.removeUnrecorded === undefined },
  readRecordedOutput: { capability: 'readRecordedOutput', absent: (s: ContractSubject) => s.executor.readRecordedOutput === undefined },
  watchInstance: { capability: 'watchInstance', absent: (s: ContractSubject) => s.executor.watchInstance === undefined },
  startSweeps: { capability: 'startSweeps', absent: (s: ContractSubject) => s.executor.startSweeps === undefined },
  startPools: { capability: 'startPools', absent: (s: ContractSubject) => s.executor.startPools === undefined },
} satisfies Partial<Record<ContractCase, { capability: string; absent: (s: ContractSubject) => boolean }>>;
type OptionalCase = keyof typeof OPTIONAL_CASES;

/** How long a watch may take to report a stopped instance (a Pod deletion reaches the watch within seconds). */
const TROUBLE_WITHIN_MS = 60_000;

/** The subject's executor, checked to implement the optional method `key` (the case fails, not throws, without it). */
function implementing<K extends OptionalCase>(expect: ExpectStatic, run: ContractRun, key: K): Executor & Required<Pick<Executor, K>> {
  const { executor } = run.subject;
  expect(executor[key], `${run.name} implements ${key} (or skips the case)`).toBeTypeOf('function');
  return executor as Executor & Required<Pick<Executor, K>>;
}

function optionalCase(run: ContractRun, skipped: ReadonlyMap<ContractCase, string>, key: OptionalCase, body: (expect: ExpectStatic) => Promise<void>): void {
  const skip = skipped.get(key);
  if (skip === undefined) {
    it(CONTRACT_CASES[key], ({ expect }) => body(expect));
    return;
  }
  it(`${CONTRACT_CASES[key]} — skipped by ${run.name}: ${skip}`, ({ expect }) => {
    const { capability, absent } = OPTIONAL_CASES[key];
    expect(absent(run.subject), `${run.name} skips the case, so it must not implement ${capability}`).toBe(true);
  });
}

export function optionalCases(run: ContractRun, skipped: ReadonlyMap<ContractCase, string>): void {
  optionalCase(run, skipped, 'removeUnrecorded', async (expect) => {
    const executor = implementing(expect, run, 'removeUnrecorded');
    const { req, rec } = run.request('unrecorded');
    const sessionId = req.identity.sessionId;
    // A crash between the launch's first side effect and its record: the first checkpoint never lands.
    const record = req.checkpointRuntimeInventory;
    let reached!: () => void;
    const atFirst = new Promise<void>((resolve) => (reached = resolve));
    let crash!: (err: Error) => void;
    const crashed = new Promise<never>((_, reject) => (crash = reject));
    let first = true;
    req.checkpointRuntimeInventory = async (cp) => {
      if (first) {
        first = false;
        reached();
        await crashed;
      }
      await record(cp);
    };
    const launch = run.launchFailing(req, rec);
    await atFirst;
    expect(await run.subject.held(sessionId), 'the launch created something before its first record').not.toEqual([]);
    await executor.removeUnrecorded(sessionId);
    expect(await run.subject.held(sessionId), 'nothing of the session is left').toEqual([]);
    await executor.removeUnrecorded(sessionId);
    crash(new Error('contract: the controller went away before the checkpoint'));
    expect((await launch).error, 'the launch cut short fails').toBeInstanceOf(Error);
    expect(await run.subject.held(sessionId)).toEqual([]);
  });

  optionalCase(run, skipped, 'readRecordedOutput', async (expect) => {
    const executor = implementing(expect, run, 'readRecordedOutput');
    const l = await run.launch('recorded');
    const printed = await runProcess(l.instance.client, ['sh', '-c', 'echo recorded-out; echo recorded-err >&2']);
    expect(printed.exitCode).toBe(0);
    await l.instance.close();
    await executor.stopInstance(run.targetOf(l), { destroy: false, reason: 'contract' });
    const target = run.targetOf(l);
    const chunks = await executor.readRecordedOutput(target, printed.id, 0);
    expect(chunks, 'the process left its output').not.toBeNull();
    const text = (stream: 'stdout' | 'stderr') => (chunks ?? []).filter((c) => c.stream === stream).map((c) => Buffer.from(c.data).toString('utf8')).join('');
    expect(text('stdout')).toBe('recorded-out\n');
    expect(text('stderr')).toBe('recorded-err\n');
    const next = Math.max(...(chunks ?? []).map((c) => c.seq)) + 1;
    expect(await executor.readRecordedOutput(target, printed.id, next), 'nothing after the last sequence number').toEqual([]);
    expect(await executor.readRecordedOutput(target, 'no-such-process', 0), 'a process that never ran').toBeNull();
  });

  optionalCase(run, skipped, 'watchInstance', async (expect) => {
    const executor = implementing(expect, run, 'watchInstance');
    const l = await run.launch('watch');
    const troubles: { reason: string; message: string }[] = [];
    const stop = executor.watchInstance(run.targetOf(l), (reason, message) => troubles.push({ reason, message }));
    try {
      await sleep(2000);
      expect(troubles, 'a healthy instance gives no trouble').toEqual([]);
      await l.instance.close();
      await executor.stopInstance(run.targetOf(l), { destroy: false, reason: 'contract' });
      for (const deadline = Date.now() + TROUBLE_WITHIN_MS; troubles.length === 0 && Date.now() < deadline; ) await sleep(250);
      await sleep(1000);
      expect(troubles, 'the stop is reported, once').toHaveLength(1);
      expect(troubles[0]?.reason).toMatch(/^\w+$/);
      expect(troubles[0]?.message).not.toBe('');
    } finally {
      stop();
      stop();
    }
  });

  optionalCase(run, skipped, 'startSweeps', async (expect) => {
    const executor = implementing(expect, run, 'startSweeps');
    const s = await run.shared;
    // every object counts as recorded: a sweep may ask, and must then leave it alone
    const stop = executor.startSweeps(() => true);
    await stop();
    expect(recordedValues(await run.subject.held(s.req.identity.sessionId)), 'nothing a session records was touched').toEqual(recordedValues(s.held));
  });

  optionalCase(run, skipped, 'startPools', async (expect) => {
    const executor = implementing(expect, run, 'startPools');
    const s = await run.shared;
    const writes: string[] = [];
    const refuse = (name: string) => async (): Promise<never> => {
      writes.push(name);
      throw new Error(`${name}: no pool is configured`);
    };
    const store = {
      insertPoolMember: refuse('insertPoolMember'),
      updatePoolMember: refuse('updatePoolMember'),
      claimPoolMember: refuse('claimPoolMember'),
      deletePoolMember: refuse('deletePoolMember'),
      putSecret: refuse('putSecret'),
      revealSecret: refuse('revealSecret'),
      getPoolMember: async () => null,
      listPoolMembers: async () => [],
      getRuntime: async () => null,
    };
    const stop = executor.startPools([], store);
    await sleep(200);
    await stop();
    expect(writes, 'no member is made or claimed').toEqual([]);
    expect(recordedValues(await run.subject.held(s.req.identity.sessionId)), 'nothing a session records was touched').toEqual(recordedValues(s.held));
  });
}
