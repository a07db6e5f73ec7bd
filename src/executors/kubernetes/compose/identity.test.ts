import { describe, expect, it } from 'vitest';
import { ComposeFieldError } from './errors.js';
import { ownershipLabels, OwnershipMismatchError, validateIdentity, validateOwnershipLabels } from './identity.js';
import { resourceNames, resourceSuffix } from './names.js';
import { createNonce } from './nonce.js';
import { IDENTITY } from '../testing/compose-fixtures.js';

describe('resourceNames', () => {
  it('derives stable names from sha256 of the instance id', () => {
    expect(resourceSuffix('instance-1')).toBe('6212a06cac8b50f7');
    expect(resourceNames('instance-1')).toEqual({ pod: 'berth-6212a06cac8b50f7', pvc: 'berth-6212a06cac8b50f7-workspace' });
    expect(resourceNames('instance-2').pod).not.toBe(resourceNames('instance-1').pod);
  });
});

describe('ownershipLabels', () => {
  it('puts the four app.kubernetes.io labels and the berth.dev identity on every object', () => {
    expect(ownershipLabels(IDENTITY)).toEqual({
      'app.kubernetes.io/name': 'berth-agent',
      'app.kubernetes.io/component': 'agent-session',
      'app.kubernetes.io/managed-by': 'berth',
      'app.kubernetes.io/instance': 'instance-1',
      'berth.dev/instance-id': 'instance-1',
      'berth.dev/session-id': 'ses-1',
      'berth.dev/executor': 'cluster',
      'berth.dev/profile': 'k8s',
    });
  });

  it.each([
    ['instanceId', '', 'identity.instance_id'],
    ['sessionId', 'has space', 'identity.session_id'],
    ['executor', '-leading', 'identity.executor'],
    ['profile', 'x'.repeat(64), 'identity.profile'],
  ] as const)('rejects %s %j at %s', (field, value, path) => {
    let caught: unknown;
    try {
      validateIdentity({ ...IDENTITY, [field]: value });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ComposeFieldError);
    expect((caught as ComposeFieldError).path).toBe(path);
  });
});

describe('validateOwnershipLabels', () => {
  const expected = ownershipLabels(IDENTITY);
  it('accepts exact owned labels and ignores others', () => {
    expect(() => validateOwnershipLabels({ ...expected, team: 'a', 'example.com/x': 'y' }, expected)).not.toThrow();
  });

  it.each([
    ['a changed identity label', { ...expected, 'berth.dev/session-id': 'other' }, 'ownership label "berth.dev/session-id" changed'],
    ['a missing standard label', { ...expected, 'app.kubernetes.io/managed-by': undefined }, 'ownership label "app.kubernetes.io/managed-by" changed'],
    ['an extra berth.dev label', { ...expected, 'berth.dev/forged': 'x' }, 'added ownership label "berth.dev/forged"'],
  ])('rejects %s', (_name, actual, message) => {
    const clean = Object.fromEntries(Object.entries(actual).filter(([, v]) => v !== undefined)) as Record<string, string>;
    let caught: unknown;
    try {
      validateOwnershipLabels(clean, expected);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(OwnershipMismatchError);
    expect((caught as OwnershipMismatchError).problems).toEqual([message]);
  });
});

describe('createNonce', () => {
  it('hex-encodes 32 bytes from the given source', () => {
    const nonce = createNonce((n) => new Uint8Array(n).fill(0xab));
    expect(nonce).toBe('ab'.repeat(32));
    expect(() => createNonce(() => new Uint8Array(16))).toThrow(/16 bytes/);
  });
});
