/**
 * Random values Berth mints per create and per launch: the create-nonce annotation (spec §3.7) and
 * the agentctl bootstrap nonce (spec §5.4), and how an object is told to be a pending create's by its
 * nonce's digest. The random source is a parameter so tests are deterministic.
 * @module
 */
import { createHash } from 'node:crypto';
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { ANNOTATION } from '../constants.js';
import { ownershipLabelProblems } from './identity.js';

/** A source of cryptographically strong random bytes (production: `node:crypto` `randomBytes`). */
export type RandomSource = (size: number) => Uint8Array;

/** Bytes of a nonce (256 bits). */
const NONCE_BYTES = 32;

/** 32 random bytes, hex-encoded (64 characters). A fresh value for every create of a Pod or PVC. */
export function createNonce(random: RandomSource): string {
  const bytes = random(NONCE_BYTES);
  if (bytes.length !== NONCE_BYTES) throw new Error(`random source returned ${bytes.length} bytes instead of ${NONCE_BYTES}`);
  return Buffer.from(bytes).toString('hex');
}

/**
 * The SHA-256 (hex) of a create nonce: what the inventory records of an object it is about to
 * create (`pvc_creating` / `pod_creating`), so a crash before the object's UID is recorded can still
 * tell that object from any other under the same name, without the nonce itself being stored.
 */
export function createNonceDigest(nonce: string): string {
  return createHash('sha256').update(nonce, 'utf8').digest('hex');
}

/**
 * Why an object found under the name of a pending create (`pvc_creating` / `pod_creating`) is not
 * the one that create made: empty only when its create-nonce annotation hashes to the recorded
 * digest and it carries exactly the ownership labels. Anything else is someone else's and is left alone.
 */
export function pendingCreateProblems(found: V1ObjectMeta, digest: string, labels: Readonly<Record<string, string>>): string[] {
  const problems: string[] = [];
  const nonce = found.annotations?.[ANNOTATION.createNonce];
  if (nonce === undefined || createNonceDigest(nonce) !== digest) problems.push('its create nonce is not the recorded one');
  problems.push(...ownershipLabelProblems(found.labels, labels));
  if (!found.uid) problems.push('it has no UID');
  return problems;
}
