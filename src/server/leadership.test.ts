import { describe, expect, it } from 'vitest';
import { Readiness } from './health.js';
import { lead } from './leadership.js';
import { FakeLeaseStore } from './leader/testing/fake-lease.js';
import { ServerMetrics } from './metrics.js';

/** Resolves when `check` holds, looking again on every event-loop turn (bounded). */
async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 2000 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 5));
  if (!check()) throw new Error(`never: ${what}`);
}

/** One replica's lead() over a shared fake Lease, recording what it does, in order. */
function replica(store: FakeLeaseStore, identity: string) {
  const log: string[] = [];
  const readiness = new Readiness();
  const port = store.port(identity);
  const fatal: Error[] = [];
  let failMark = 0;
  const leadership = lead({
    settings: {
      port,
      identity,
      leaseName: 'berth',
      namespace: 'ns',
      leaseDurationMs: 600,
      renewDeadlineMs: 400,
      retryPeriodMs: 100,
      markLeader: async (leading) => {
        log.push(`label ${leading ? 'set' : 'removed'}`);
        if (failMark > 0) {
          failMark--;
          throw new Error('forbidden');
        }
      },
    },
    readiness,
    metrics: new ServerMetrics({ targets: [], version: 'test', defaultMetrics: false }),
    start: async (term) => {
      log.push(`start generation ${term.generation}`);
    },
    stop: async () => {
      log.push('stop');
    },
    onFatal: (err) => fatal.push(err),
    labelRetryMs: 10,
  });
  return { log, readiness, port, fatal, leadership, failLabel: (times = Infinity) => (failMark = times) };
}

describe('lead (serve as one replica of several)', () => {
  it('clears a stale label before it stands by, labels its Pod once its controller serves, and hands over on release', async () => {
    const store = new FakeLeaseStore();
    const a = replica(store, 'pod-a');
    await until(() => a.log.includes('label set'), 'a leads');
    expect(a.log).toEqual(['label removed', 'start generation 0', 'label set']);
    const b = replica(store, 'pod-b');
    await until(() => b.readiness.state.ready === false && (b.readiness.state as { reason: string }).reason === 'standby', 'b stands by');
    expect(b.log).toEqual(['label removed']);

    await a.leadership.release();
    expect(a.log.slice(3).sort(), 'released: the controller stopped and the label went, before the Lease was handed over').toEqual(['label removed', 'stop']);
    expect(a.fatal, 'a release is no failure').toEqual([]);
    await until(() => b.log.includes('label set'), 'b takes over');
    expect(b.log).toEqual(['label removed', 'start generation 1', 'label set']);
    await b.leadership.release();
  });

  it('sets its label again until it holds: a leader with no label would get no traffic', async () => {
    const store = new FakeLeaseStore();
    const a = replica(store, 'pod-a');
    a.failLabel(3); // the first three tries to set it (the stale-label removal went first, before this)
    await until(() => a.log.filter((l) => l === 'label set').length === 4, 'a labels its Pod at the fourth try');
    expect(a.log).toEqual(['label removed', 'start generation 0', 'label set', 'label set', 'label set', 'label set']);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(a.log, 'set once it held, it is not set again').toEqual(['label removed', 'start generation 0', 'label set', 'label set', 'label set', 'label set']);
    expect(a.fatal).toEqual([]);
    await a.leadership.release();
  });

  it('stops its controller and asks serve to exit when its term ends; a label it cannot remove is no reason to wait', async () => {
    const store = new FakeLeaseStore();
    const a = replica(store, 'pod-a');
    await until(() => a.log.includes('label set'), 'a leads');
    a.failLabel();
    a.port.mode = 'fail'; // the API server is gone for this replica: renewals fail past the deadline
    await until(() => a.fatal.length === 1, 'a gives up its term');
    expect(a.log.slice(3).sort()).toEqual(['label removed', 'stop']);
    expect(a.fatal[0]?.message).toMatch(/lost the controller Lease/);
    expect(a.readiness.state).toMatchObject({ ready: false, reason: 'stopping' });
    await a.leadership.release();
  });
});
