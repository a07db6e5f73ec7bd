import { describe, expect, it } from 'vitest';
import { Readiness, readinessResponse } from './health.js';

describe('Readiness', () => {
  it('starts not ready (starting) and answers 503 with the reason', () => {
    const r = new Readiness();
    expect(r.ready).toBe(false);
    const { status, body } = readinessResponse(r.state);
    expect(status).toBe(503);
    expect(body).toMatchObject({ status: 'not_ready', reason: 'starting' });
  });

  it('answers 200 once marked ready, and 503 standby when a standby flips it back', () => {
    const r = new Readiness();
    const seen: boolean[] = [];
    const off = r.onChange((s) => seen.push(s.ready));
    r.markReady();
    expect(readinessResponse(r.state)).toEqual({ status: 200, body: { status: 'ready' } });
    r.markNotReady('standby');
    expect(readinessResponse(r.state)).toEqual({ status: 503, body: { status: 'not_ready', reason: 'standby', message: 'a standby: another controller is active' } });
    off();
    r.markNotReady('stopping', 'draining');
    expect(seen).toEqual([true, false]);
    expect(r.state).toEqual({ ready: false, reason: 'stopping', message: 'draining' });
  });

  it('with standby=ok (the Pod readiness probe under leader election) a standby is ready for the rollout, nothing else is', () => {
    const r = new Readiness();
    expect(readinessResponse(r.state, { standbyOk: true }).status, 'starting').toBe(503);
    r.markNotReady('standby');
    expect(readinessResponse(r.state, { standbyOk: true })).toEqual({ status: 200, body: { status: 'not_ready', reason: 'standby', message: 'a standby: another controller is active' } });
    expect(readinessResponse(r.state).status, 'plain /readyz: no traffic to a standby').toBe(503);
    r.markNotReady('stopping');
    expect(readinessResponse(r.state, { standbyOk: true }).status).toBe(503);
  });
});
