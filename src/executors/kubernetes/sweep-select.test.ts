import { describe, expect, it } from 'vitest';
import { ownershipLabels } from './compose/index.js';
import { ANNOTATION } from './constants.js';
import { selectForSweep, sweptObject, type ObjectOwner, type SelectContext } from './sweep-select.js';

const OURS = 'a'.repeat(32);
const NOW = new Date('2026-12-03T08:00:00Z');
const MIN_AGE = 60_000;
const identity = { instanceId: 'inst-1', sessionId: 'sess-1', executor: 'k8s', profile: 'k8s' };

/** A listed Pod of session sess-1 created `ageMs` before NOW (server clock) with these annotations. */
function pod(ageMs: number, annotations: Record<string, string> = { [ANNOTATION.installation]: OURS }, extra: { deleting?: boolean; labels?: Record<string, string> } = {}) {
  const o = sweptObject('Pod', {
    name: 'berth-0123456789abcdef',
    namespace: 'agents',
    uid: 'uid-1',
    resourceVersion: '42',
    labels: extra.labels ?? ownershipLabels(identity),
    annotations: { [ANNOTATION.createNonce]: 'n'.repeat(64), ...annotations },
    creationTimestamp: new Date(NOW.getTime() - ageMs),
    ...(extra.deleting ? { deletionTimestamp: NOW } : {}),
  });
  if (o === null) throw new Error('not a swept object');
  return o;
}

const ctx = (recorded: (o: ObjectOwner) => boolean = () => false): SelectContext => ({ installationId: OURS, isRecorded: recorded, serverNow: NOW, minAgeMs: MIN_AGE });

describe('selectForSweep', () => {
  it('deletes an object of this installation that no session claims and that is older than the minimum age', () => {
    expect(selectForSweep(pod(MIN_AGE + 1), ctx())).toEqual({ action: 'delete', owner: { instanceId: 'inst-1', sessionId: 'sess-1' } });
  });

  it('never deletes an object a session claims, however old, and asks about its own session and instance', () => {
    const asked: ObjectOwner[] = [];
    const verdict = selectForSweep(pod(10 * MIN_AGE), ctx((o) => (asked.push(o), true)));
    expect(verdict).toEqual({ action: 'keep', why: 'recorded' });
    expect(asked).toEqual([{ instanceId: 'inst-1', sessionId: 'sess-1' }]);
  });

  it('waits for an unclaimed object of ours younger than the minimum age (by the server clock), saying when it is old enough', () => {
    expect(selectForSweep(pod(MIN_AGE - 5_000), ctx())).toEqual({ action: 'wait', owner: { instanceId: 'inst-1', sessionId: 'sess-1' }, oldEnoughInMs: 5_000 });
    expect(selectForSweep(pod(0), ctx()).action).toBe('wait');
  });

  it('only reports an old unclaimed object of another installation, or one with no installation id', () => {
    const other = selectForSweep(pod(10 * MIN_AGE, { [ANNOTATION.installation]: 'b'.repeat(32) }), ctx());
    expect(other).toEqual({ action: 'report', why: 'it was created by another Berth (installation bbbbbbbb…)' });
    expect(selectForSweep(pod(10 * MIN_AGE, {}), ctx())).toMatchObject({ action: 'report', why: expect.stringContaining('no installation id') as string });
    expect(selectForSweep(pod(10 * MIN_AGE, { [ANNOTATION.installation]: '' }), { ...ctx(), installationId: '' }).action).toBe('report');
  });

  it('keeps a claimed object without an installation id quiet (this Berth’s, from before installation ids)', () => {
    expect(selectForSweep(pod(10 * MIN_AGE, {}), ctx(() => true))).toEqual({ action: 'keep', why: 'recorded' });
  });

  it('reports an object with Berth’s labels but no session and instance labels, and leaves one being deleted alone', () => {
    const labels = { 'app.kubernetes.io/managed-by': 'berth' };
    expect(selectForSweep(pod(10 * MIN_AGE, undefined, { labels }), ctx()).action).toBe('report');
    expect(selectForSweep(pod(10 * MIN_AGE, undefined, { deleting: true }), ctx())).toEqual({ action: 'keep', why: 'deleting' });
  });

  it('reads what it needs from the object metadata, and nothing without a name or UID', () => {
    expect(pod(1000)).toMatchObject({ kind: 'Pod', namespace: 'agents', name: 'berth-0123456789abcdef', uid: 'uid-1', resourceVersion: '42', deleting: false });
    expect(sweptObject('PVC', { name: 'x', namespace: 'agents' })).toBeNull();
  });
});
