import { describe, expect, it } from 'vitest';
import { liftGatePatch } from './gate.js';

const TARGET = { namespace: 'agents', name: 'berth-x', uid: 'uid-1' };

describe('liftGatePatch', () => {
  it('tests the UID and the gate list as read before it removes the last gate', () => {
    expect(liftGatePatch({ ...TARGET, gates: ['berth.dev/workspace-claim'] }, 'berth.dev/workspace-claim')).toEqual([
      { op: 'test', path: '/metadata/uid', value: 'uid-1' },
      { op: 'test', path: '/spec/schedulingGates', value: [{ name: 'berth.dev/workspace-claim' }] },
      { op: 'remove', path: '/spec/schedulingGates' },
    ]);
  });

  it("keeps another controller's gates, in order", () => {
    const gates = ['example.com/quota', 'berth.dev/workspace-claim', 'example.com/other'];
    expect(liftGatePatch({ ...TARGET, gates }, 'berth.dev/workspace-claim').slice(1)).toEqual([
      { op: 'test', path: '/spec/schedulingGates', value: gates.map((name) => ({ name })) },
      { op: 'replace', path: '/spec/schedulingGates', value: [{ name: 'example.com/quota' }, { name: 'example.com/other' }] },
    ]);
  });
});
