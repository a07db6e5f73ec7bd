import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ANNOTATION } from '../constants.js';
import { ownershipLabels } from './identity.js';
import { createNonceDigest, pendingCreateProblems } from './nonce.js';

const IDENTITY = { instanceId: 's-1-abc', sessionId: 's-1', executor: 'cluster', profile: 'k8s' };
const LABELS = ownershipLabels(IDENTITY);
const NONCE = 'ab'.repeat(32);
const DIGEST = createNonceDigest(NONCE);

describe('createNonceDigest', () => {
  it('is the SHA-256 of the nonce, never the nonce', () => {
    expect(DIGEST).toBe(createHash('sha256').update(NONCE).digest('hex'));
    expect(DIGEST).not.toContain(NONCE);
    expect(createNonceDigest('cd'.repeat(32))).not.toBe(DIGEST);
  });
});

describe('pendingCreateProblems: is the object under a pending create name that create?', () => {
  const ours = { uid: 'u-1', labels: { ...LABELS, app: 'x' }, annotations: { [ANNOTATION.createNonce]: NONCE } };

  it('accepts the object with the recorded nonce and exactly the ownership labels (other labels are fine)', () => {
    expect(pendingCreateProblems(ours, DIGEST, LABELS)).toEqual([]);
  });

  it.each([
    ['no nonce', { ...ours, annotations: {} }, /create nonce/],
    ['another nonce', { ...ours, annotations: { [ANNOTATION.createNonce]: 'cd'.repeat(32) } }, /create nonce/],
    ['the digest itself as its annotation', { ...ours, annotations: { [ANNOTATION.createNonce]: DIGEST } }, /create nonce/],
    ['a changed ownership label', { ...ours, labels: { ...LABELS, 'berth.dev/session-id': 's-2' } }, /ownership label/],
    ['no labels', { ...ours, labels: {} }, /ownership label/],
    ['no UID', { ...ours, uid: '' }, /no UID/],
  ])('refuses an object with %s', (_what, found, problem) => {
    expect(pendingCreateProblems(found, DIGEST, LABELS).join('; ')).toMatch(problem);
  });
});
