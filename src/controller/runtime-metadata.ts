/**
 * Pure helpers over a runtime row's metadata: the agent it records (and why it is lost) and the
 * secret-reference keys a revive carries over.
 * @module
 */
import { SECRET_ID_KEY_PREFIX } from '../inventory/index.js';
import { AGENT_LOST_KEY, AGENT_PROCESS_KEY } from './agent.js';
import { SECRET_REF } from './context.js';

/** Metadata recording agent `agentId` (and why it is lost, or nothing when it is not). */
export function withAgent(metadata: Readonly<Record<string, string>>, agentId: string, lostReason: string | null): Record<string, string> {
  const out: Record<string, string> = { ...metadata, [AGENT_PROCESS_KEY]: agentId };
  if (lostReason === null) delete out[AGENT_LOST_KEY];
  else out[AGENT_LOST_KEY] = lostReason;
  return out;
}

export function secretMetadata(ids: { authToken: string; bootstrapNonce: string }): Record<string, string> {
  return {
    [`${SECRET_ID_KEY_PREFIX}${SECRET_REF.authToken}`]: ids.authToken,
    [`${SECRET_ID_KEY_PREFIX}${SECRET_REF.bootstrapNonce}`]: ids.bootstrapNonce,
  };
}

export function pickSecretMetadata(metadata: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(metadata)) if (k.startsWith(SECRET_ID_KEY_PREFIX)) out[k] = v;
  return out;
}

