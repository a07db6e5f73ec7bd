import { describe, expect, it } from 'vitest';
import type { ResolvedConfig } from '../../config/index.js';
import { leaseRequest } from './serve-leader.js';

const postgres = { store: { backend: 'postgres', urlEnv: 'BERTH_DATABASE_URL', secretKeyEnv: 'BERTH_SECRET_KEY' } } as unknown as ResolvedConfig;
const sqlite = { store: { backend: 'sqlite' } } as unknown as ResolvedConfig;

describe('serve --lease', () => {
  it('is off without the flag or $BERTH_LEASE', () => {
    expect(leaseRequest(undefined, {}, postgres)).toBeNull();
    expect(leaseRequest(undefined, { BERTH_LEASE: '' }, postgres)).toBeNull();
  });

  it('takes the namespace from POD_NAMESPACE and the identity from POD_NAME, with the default timings', () => {
    expect(leaseRequest('berth-controller', { POD_NAMESPACE: 'berth', POD_NAME: 'berth-7c9-x2' }, postgres)).toEqual({
      name: 'berth-controller',
      namespace: 'berth',
      identity: 'berth-7c9-x2',
      pod: null, // not in a Pod (no service account mounted): no leader label to set
      timings: null,
    });
    expect(leaseRequest(undefined, { BERTH_LEASE: 'l', POD_NAMESPACE: 'ns', POD_NAME: 'p', BERTH_LEASE_TIMINGS: '4000, 3000, 1000' }, postgres)?.timings).toEqual({
      leaseDurationMs: 4000,
      renewDeadlineMs: 3000,
      retryPeriodMs: 1000,
    });
  });

  it('refuses the sqlite store (replicas would each have their own inventory), a bad name, a missing namespace and bad timings, naming what to fix', () => {
    expect(() => leaseRequest('l', { POD_NAMESPACE: 'ns' }, sqlite)).toThrow(/--lease needs store.backend: postgres/);
    expect(() => leaseRequest('Bad_Name', { POD_NAMESPACE: 'ns' }, postgres)).toThrow(/--lease "Bad_Name": must be a Kubernetes object name/);
    expect(() => leaseRequest('l', { POD_NAMESPACE: 'Not A Namespace' }, postgres)).toThrow(/set POD_NAMESPACE/);
    expect(() => leaseRequest('l', { POD_NAMESPACE: 'ns', BERTH_LEASE_TIMINGS: '4000,3000' }, postgres)).toThrow(/BERTH_LEASE_TIMINGS="4000,3000": must be LEASE,RENEW,RETRY/);
  });
});
