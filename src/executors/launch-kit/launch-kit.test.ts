import { describe, expect, it } from 'vitest';
import type { StageEvent } from '../executor.js';
import { attachRollbackErrors, INIT_STAGE, isLaunchError, LaunchError, reportStage, Rollback, ROLLBACK_TIMEOUT_MS, runStage, sessionIdentity, toLaunchError } from './index.js';

const recorder = (): { events: StageEvent[]; onStage: (e: StageEvent) => void } => {
  const events: StageEvent[] = [];
  return { events, onStage: (e) => events.push(e) };
};
const brief = (events: StageEvent[]) => events.map((e) => `${e.stage}:${e.status}${e.reason ? `:${e.reason}` : ''}`);

describe('runStage', () => {
  it('reports running then succeeded and returns the result', async () => {
    const r = recorder();
    await expect(runStage(r.onStage, 'storage', async () => 42)).resolves.toBe(42);
    expect(brief(r.events)).toEqual(['storage:running', 'storage:succeeded']);
    expect(r.events.every((e) => e.at instanceof Date)).toBe(true);
  });

  it('wraps a plain failure as a LaunchError of the stage, message sanitized, cause kept', async () => {
    const r = recorder();
    const cause = new Error('clone of https://user:hunter2@example.com/x.git failed');
    const err = await runStage(r.onStage, 'workspace', () => Promise.reject(cause)).catch((e: unknown) => e);
    expect(isLaunchError(err)).toBe(true);
    const le = err as LaunchError;
    expect(le).toMatchObject({ stage: 'workspace', reason: 'Error' });
    expect(le.message).toMatch(/^workspace: clone of /);
    expect(le.message).not.toContain('hunter2');
    expect(le.cause).toBe(cause);
    expect(brief(r.events)).toEqual(['workspace:running', 'workspace:failed:Error']);
    expect(r.events[1]?.message).toBe(le.message);
  });

  it('passes a LaunchError through unchanged (its own stage and reason)', async () => {
    const r = recorder();
    const original = new LaunchError('pod_ready', 'ImagePullBackOff', 'cannot pull');
    const err = await runStage(r.onStage, 'bootstrap', () => Promise.reject(original)).catch((e: unknown) => e);
    expect(err).toBe(original);
    expect(brief(r.events)).toEqual(['bootstrap:running', 'bootstrap:failed:ImagePullBackOff']);
  });

  it('takes the reason of a plain failure from reasonOf', async () => {
    const err = await runStage(() => undefined, 'storage', () => Promise.reject(new Error('x')), { reasonOf: () => 'Forbidden' }).catch((e: unknown) => e);
    expect(err).toMatchObject({ stage: 'storage', reason: 'Forbidden' });
  });

  it('reports a note as waiting right after the start and keeps it on success', async () => {
    const r = recorder();
    await runStage(r.onStage, 'agentctl_start', async () => undefined, { note: () => ({ reason: 'Unsandboxed', message: 'no sandbox' }) });
    expect(brief(r.events)).toEqual(['agentctl_start:running', 'agentctl_start:waiting:Unsandboxed', 'agentctl_start:succeeded:Unsandboxed']);
    expect(r.events[2]?.message).toBe('no sandbox');
  });

  it('a throwing listener never fails the stage', async () => {
    const onStage = (): void => {
      throw new Error('listener bug');
    };
    await expect(runStage(onStage, 'storage', async () => 'ok')).resolves.toBe('ok');
    const err = await runStage(onStage, 'storage', () => Promise.reject(new Error('real'))).catch((e: unknown) => e);
    expect(err).toMatchObject({ stage: 'storage', message: 'storage: real' });
  });
});

describe('reportStage and toLaunchError', () => {
  it('stamps the event unless it has a time, and swallows a listener error', () => {
    const r = recorder();
    const at = new Date(0);
    reportStage(r.onStage, { stage: 'pod_replaced', status: 'running', at });
    reportStage(r.onStage, { stage: 'pod_replaced', status: 'succeeded' });
    expect(r.events[0]?.at).toBe(at);
    expect(r.events[1]?.at.getTime()).toBeGreaterThan(0);
    expect(() =>
      reportStage(() => {
        throw new Error('x');
      }, { stage: 's', status: 'running' }),
    ).not.toThrow();
  });

  it('wraps non-errors too', () => {
    expect(toLaunchError(INIT_STAGE, 'boom')).toMatchObject({ stage: 'initialize', reason: 'Error', message: 'initialize: boom' });
  });
});

describe('attachRollbackErrors', () => {
  it('records the errors on a LaunchError and in its message, keeping its class', () => {
    const le = new LaunchError('storage', 'Quota', 'no room');
    const out = attachRollbackErrors(le, [new Error('delete pvc failed')]);
    expect(out).toBe(le);
    expect(le.rollbackErrors).toHaveLength(1);
    expect(le.message).toBe('no room (and rollback failed: delete pvc failed)');
    expect(le.cause).toBeInstanceOf(AggregateError);
  });

  it('leaves the failure as it is when the rollback was clean', () => {
    const le = new LaunchError('storage', 'Quota', 'no room');
    expect(attachRollbackErrors(le, [])).toBe(le);
    expect(le.message).toBe('no room');
    expect(le.rollbackErrors).toEqual([]);
  });

  it('turns a thrown non-error into an Error', () => {
    const out = attachRollbackErrors('gone', [new Error('x')]);
    expect(out).toBeInstanceOf(Error);
    expect(out.message).toBe('gone (and rollback failed: x)');
    expect((out as Error & { rollbackErrors: unknown[] }).rollbackErrors).toHaveLength(1);
  });
});

describe('Rollback', () => {
  it('runs the steps in order and finishes clean', async () => {
    const rb = new Rollback();
    const done: string[] = [];
    await rb.step('a', async () => done.push('a'));
    await rb.step('b', async () => done.push('b'));
    expect(done).toEqual(['a', 'b']);
    expect(rb.clean).toBe(true);
    expect(rb.timeoutMs).toBe(ROLLBACK_TIMEOUT_MS);
    const failure = new LaunchError('x', 'Y', 'z');
    expect(rb.finish(failure)).toBe(failure);
    expect(failure.message).toBe('z');
  });

  it('skips every step after a failed one and attaches the error', async () => {
    const rb = new Rollback();
    const done: string[] = [];
    await rb.step('a', () => Promise.reject(new Error('a failed')));
    await rb.step('b', async () => done.push('b'));
    expect(done).toEqual([]);
    const out = rb.finish(new LaunchError('s', 'R', 'launch failed')) as LaunchError;
    expect(out.rollbackErrors.map((e) => (e as Error).message)).toEqual(['a failed']);
    expect(out.message).toBe('launch failed (and rollback failed: a failed)');
  });

  it('takes errors a step collected itself', async () => {
    const rb = new Rollback();
    rb.record(new Error('pod'), new Error('pvc'));
    expect(rb.clean).toBe(false);
    let released = false;
    await rb.step('release', async () => {
      released = true;
    });
    expect(released).toBe(false);
    expect(rb.errors).toHaveLength(2);
  });

  it('abandons a step still running at the deadline, and runs none after it', async () => {
    const rb = new Rollback({ timeoutMs: 50 });
    expect(rb.signal.aborted).toBe(false);
    await rb.step('hang', () => new Promise(() => undefined));
    expect(rb.signal.aborted).toBe(true);
    expect(rb.errors.map((e) => (e as Error).message)).toEqual(['rollback: hang did not finish within the rollback deadline of 50 ms']);
  });

  it('does not start a step once the deadline passed', async () => {
    const rb = new Rollback({ timeoutMs: 10 });
    await new Promise((r) => setTimeout(r, 30));
    let ran = false;
    await rb.step('late', async () => {
      ran = true;
    });
    expect(ran).toBe(false);
    expect((rb.errors[0] as Error).message).toBe('rollback: late not done: the rollback deadline of 10 ms passed');
  });
});

describe('sessionIdentity', () => {
  it('uses the session id as task and environment id', () => {
    expect(sessionIdentity('s1', 's1-abc')).toEqual({ instanceId: 's1-abc', sessionId: 's1', taskId: 's1', environmentId: 's1' });
  });
});
