import { describe, expect, it } from 'vitest';
import { isAmbiguousCreateError } from './ambiguous.js';
import { describeEvent } from './events.js';
import { parseProbeOutput, PROBE_SCRIPT } from './probe.js';
import { runSh, SHELLS } from '../testing/compose-fixtures.js';
import { sanitizeKubeText } from './text.js';

describe('sanitizeKubeText', () => {
  it('reduces URLs to scheme and host and redacts tokens', () => {
    const out = sanitizeKubeText('GET https://user:pw@registry.example:5000/v2/private/repo/manifests/1?token=xyz failed: Bearer abcdefghijklmnopqrstuvwxyz012345');
    expect(out).toBe('GET https://registry.example:5000 failed: Bearer ***');
  });
});

describe('describeEvent', () => {
  it('describes a warning with its sanitized message and repeat count', () => {
    const d = describeEvent({
      metadata: {},
      involvedObject: { kind: 'Pod', name: 'berth-x' },
      type: 'Warning',
      reason: 'FailedScheduling',
      message: '0/1 nodes are available: 1 Insufficient memory.',
      count: 3,
    });
    expect(d).toEqual({ warning: true, reason: 'FailedScheduling', message: '0/1 nodes are available: 1 Insufficient memory. (x3)', object: 'Pod/berth-x' });
  });

  it('describes normal progress events and drops empty ones', () => {
    expect(describeEvent({ metadata: {}, involvedObject: { kind: 'Pod', name: 'p' }, type: 'Normal', reason: 'Pulling', message: 'Pulling image "busybox"' })).toMatchObject({
      warning: false,
      reason: 'Pulling',
    });
    expect(describeEvent({ metadata: {}, involvedObject: {} })).toBeNull();
  });

  it('keeps registry credentials out of FailedMount/Failed messages', () => {
    const d = describeEvent({ metadata: {}, involvedObject: { kind: 'Pod', name: 'p' }, type: 'Warning', reason: 'Failed', message: 'Failed to pull image: https://registry.example/token?secret=1' });
    expect(d!.message).toBe('Failed to pull image: https://registry.example');
  });
});

describe('isAmbiguousCreateError', () => {
  const api = (code: number, reason?: string) => Object.assign(new Error(`HTTP-Code: ${code}`), { code, body: JSON.stringify({ kind: 'Status', reason, code }) });
  const sys = (code: string) => Object.assign(new Error(code), { code });
  it.each([
    ['HTTP 500', api(500, 'InternalError')],
    ['HTTP 503', api(503)],
    ['HTTP 504 Timeout', api(504, 'Timeout')],
    ['a ServerTimeout status', api(429, 'ServerTimeout')],
    ['HTTP 408', { statusCode: 408 }],
    ['ECONNRESET', sys('ECONNRESET')],
    ['EPIPE', sys('EPIPE')],
    ['socket hang up', new Error('request to https://api:6443/api/v1/pods failed, reason: socket hang up')],
    ['an AbortError', Object.assign(new Error('The operation was aborted'), { name: 'AbortError' })],
    ['a TimeoutError', Object.assign(new Error('signal timed out'), { name: 'TimeoutError' })],
    ['a wrapped ECONNRESET', new Error('fetch failed', { cause: sys('ECONNRESET') })],
  ])('treats %s as ambiguous', (_name, err) => {
    expect(isAmbiguousCreateError(err)).toBe(true);
  });

  it.each([
    ['HTTP 409 AlreadyExists', api(409, 'AlreadyExists')],
    ['HTTP 403 admission denial', api(403, 'Forbidden')],
    ['HTTP 422 Invalid', api(422, 'Invalid')],
    ['HTTP 400', api(400, 'BadRequest')],
    ['ECONNREFUSED (never sent)', sys('ECONNREFUSED')],
    ['ENOTFOUND', sys('ENOTFOUND')],
    ['a plain error', new Error('validation failed')],
    ['not an error', 'oops'],
  ])('treats %s as definite', (_name, err) => {
    expect(isAmbiguousCreateError(err)).toBe(false);
  });
});

describe('parseProbeOutput', () => {
  it.each([
    ['node=v20.11.1\narch=x86_64\ngzip=yes\n', { flavor: 'bundle', nodeVersion: 'v20.11.1', arch: 'x86_64', gzip: true }],
    ['node=v18.0.0\narch=aarch64\ngzip=no\n', { flavor: 'bundle', nodeVersion: 'v18.0.0', arch: 'aarch64', gzip: false }],
    ['node=v16.20.2\narch=x86_64\n', { flavor: 'sea', nodeVersion: 'v16.20.2', arch: 'x86_64', gzip: false }],
    ['node=none\narch=x86_64\ngzip=yes\n', { flavor: 'sea', nodeVersion: null, arch: 'x86_64', gzip: true }],
    ['garbage', { flavor: 'sea', nodeVersion: null, arch: null, gzip: false }],
  ])('parses %j', (out, expected) => {
    expect(parseProbeOutput(out)).toEqual(expected);
  });

  it.each(SHELLS)('reads the real probe output under %s', (_label, shell) => {
    const withNode = parseProbeOutput(runSh(shell, PROBE_SCRIPT).stdout);
    expect(withNode.nodeVersion).toBe(process.version);
    expect(withNode.flavor).toBe('bundle');
    expect(withNode.gzip, 'gzip works on this machine').toBe(true);
    const r = runSh(shell, PROBE_SCRIPT, { env: { PATH: '/nonexistent' } });
    expect(r.status).toBe(0);
    expect(parseProbeOutput(r.stdout)).toMatchObject({ flavor: 'sea', nodeVersion: null });
  });
});
