import { describe, expect, it } from 'vitest';
import { eventBody, type EventRecord } from './events.js';

const record: EventRecord = {
  regarding: { kind: 'Pod', namespace: 'agents', name: 'berth-inst-1', uid: 'u-1' },
  related: { kind: 'Pod', namespace: 'agents', name: 'berth-inst-1', uid: 'u-0' },
  type: 'Warning',
  reason: 'LaunchFailed',
  action: 'Launch',
  note: 'Launch of session s failed at stage pod_ready (ErrImagePull): no such image.',
  reportingController: 'berth.dev/controller',
  reportingInstance: 'host-1',
  time: new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)),
};

describe('eventBody', () => {
  it('is an events.k8s.io/v1 Event about the object, in its namespace, with a MicroTime the API server accepts', () => {
    const wire = JSON.parse(JSON.stringify(eventBody(record))) as Record<string, unknown>;
    // MicroTime: RFC 3339 with exactly six fractional digits (a Date's three are refused)
    expect(wire.eventTime).toBe('2026-01-02T03:04:05.678000Z');
    expect(wire).toMatchObject({
      apiVersion: 'events.k8s.io/v1',
      kind: 'Event',
      metadata: { namespace: 'agents' },
      regarding: { apiVersion: 'v1', kind: 'Pod', namespace: 'agents', name: 'berth-inst-1', uid: 'u-1' },
      related: { kind: 'Pod', uid: 'u-0' },
      type: 'Warning',
      reason: 'LaunchFailed',
      action: 'Launch',
      note: record.note,
      reportingController: 'berth.dev/controller',
      reportingInstance: 'host-1',
    });
  });

  it('names each Event after its object and time, uniquely', () => {
    const a = eventBody(record).metadata?.name ?? '';
    const b = eventBody(record).metadata?.name ?? '';
    expect(a).toMatch(/^berth-inst-1\.[0-9a-f]+$/);
    expect(a).not.toBe(b);
  });
});
