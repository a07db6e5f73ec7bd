import { describe, expect, it } from 'vitest';
import type { Logger } from '../../shared/logger.js';
import { LaunchError } from '../launch-kit/index.js';
import { EventRecorder, eventNote, launchFailedEvent, REPORTING_CONTROLLER } from './event-recorder.js';
import { apiError } from './testing/fake-kube.js';
import { FakeKubeEvents } from './testing/fake-events.js';

const POD = { kind: 'Pod', namespace: 'agents', name: 'berth-inst-1', uid: 'u-1' } as const;

function recordingLog(): Logger & { warnings: string[]; debugs: string[] } {
  const warnings: string[] = [];
  const debugs: string[] = [];
  return { warnings, debugs, debug: (_o, m) => debugs.push(m ?? ''), info: () => undefined, warn: (o, m) => warnings.push(`${m ?? ''} ${JSON.stringify(o)}`), error: () => undefined };
}

describe('eventNote', () => {
  it('removes the exact secrets, credentials and URL paths, and keeps the sentence readable', () => {
    const note = eventNote('clone of https://user:pw@git.example/org/repo.git?token=abc failed: key hunter2-very-secret rejected; Authorization: Bearer abcdefghijklmnop', ['hunter2-very-secret']);
    expect(note).not.toContain('hunter2-very-secret');
    expect(note).not.toContain('pw@');
    expect(note).not.toContain('org/repo');
    expect(note).not.toContain('abcdefghijklmnop');
    expect(note).toContain('https://git.example');
    expect(note).toContain('failed');
  });

  it('fits the API server\'s 1 KiB, counted in bytes', () => {
    const note = eventNote('é'.repeat(2000));
    expect(Buffer.byteLength(note)).toBeLessThanOrEqual(1024);
    expect(note.endsWith('…')).toBe(true);
  });
});

describe('launchFailedEvent', () => {
  it('names the stage and the reason of a LaunchError, then what happens next', () => {
    const e = launchFailedEvent(POD, 'ses-1', new LaunchError('pod_ready', 'ErrImageNeverPull', 'image x:1 is not present'), 'Berth deletes what this launch created.');
    expect(e).toMatchObject({ regarding: POD, type: 'Warning', reason: 'LaunchFailed', action: 'Launch' });
    expect(e.note).toBe('Launch of session ses-1 failed at stage pod_ready (ErrImageNeverPull): image x:1 is not present. Berth deletes what this launch created.');
  });
});

describe('EventRecorder', () => {
  it('writes the Event stamped with Berth as the reporting controller and this host as the instance', async () => {
    const port = new FakeKubeEvents();
    const rec = new EventRecorder(() => port, { log: recordingLog(), instance: 'berth-host' });
    await rec.emit({ regarding: POD, type: 'Normal', reason: 'Reaped', action: 'Delete', note: 'token=s3cr3t-value gone' });
    expect(port.written).toHaveLength(1);
    expect(port.written[0]).toMatchObject({ regarding: POD, reason: 'Reaped', reportingController: REPORTING_CONTROLLER, reportingInstance: 'berth-host' });
    expect(port.written[0]?.note).not.toContain('s3cr3t-value');
  });

  it('never rejects when the Role lacks the rule, and warns once with what to add', async () => {
    const port = new FakeKubeEvents();
    port.fail = apiError(403, 'Forbidden', 'events.events.k8s.io is forbidden: User "system:serviceaccount:agents:berth-executor" cannot create resource "events"');
    const log = recordingLog();
    const rec = new EventRecorder(() => port, { log });
    await rec.emit({ regarding: POD, type: 'Warning', reason: 'LaunchFailed', action: 'Launch', note: 'a' });
    await rec.emit({ regarding: POD, type: 'Normal', reason: 'Reaped', action: 'Delete', note: 'b' });
    expect(port.attempts).toBe(2);
    expect(log.warnings).toHaveLength(1);
    expect(log.warnings[0]).toContain('add "create" on "events" in API group "events.k8s.io" to the Role');
    expect(log.warnings[0]).toContain('launches are not affected');
    expect(log.debugs).toHaveLength(1);
  });

  it('gives up on an Event the API server does not answer, and goes on', async () => {
    const port = new FakeKubeEvents();
    port.fail = 'hang';
    const log = recordingLog();
    const rec = new EventRecorder(() => port, { log, timeoutMs: 20 });
    await rec.emit({ regarding: POD, type: 'Warning', reason: 'LaunchFailed', action: 'Launch', note: 'a' });
    expect(log.warnings).toHaveLength(1);
    expect(log.warnings[0]).toContain('check that the API server answers');
  });

  it('never rejects when the port cannot even be built (no client configuration)', async () => {
    const log = recordingLog();
    const rec = new EventRecorder(() => {
      throw new Error('kubernetes: load client configuration failed');
    }, { log });
    await expect(rec.emit({ regarding: POD, type: 'Warning', reason: 'LaunchFailed', action: 'Launch', note: 'a' })).resolves.toBeUndefined();
    expect(log.warnings).toHaveLength(1);
  });
});
