/**
 * `pool:` on a profile of a Kubernetes executor: a warm pool of `size` pre-provisioned Pod + PVC
 * pairs, each with agentctl started and healthy but holding no session's identity (no nonce
 * accepted, no secret, no repository), claimed by the profile's next launch. Members older than
 * `max_age`, or built from an earlier version of the profile, are replaced.
 * @module
 */
import { z } from 'zod';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { parseDuration } from './idle.js';

export const PoolSchema = z.strictObject({
  /** How many ready members to keep (0: none; the pool's members are removed). */
  size: z.number({ error: 'must be a whole number from 0 to 50' }),
  /** A duration (`1h`, `30m`): a member older than this is replaced. @default 24h */
  max_age: z.string({ error: 'must be a duration such as 1h or 30m' }).optional(),
});

/** The resolved `pool:` block. */
export interface PoolPolicy {
  size: number;
  maxAgeMs: number;
}

/** A larger pool is a misconfiguration on one cluster's quota (each member holds a Pod and a volume). */
const MAX_SIZE = 50;
const DEFAULT_MAX_AGE_MS = 86_400_000;
/** Shorter than this, members are replaced faster than they are made. */
const MIN_AGE_MS = 60_000;
const MAX_AGE_MS = 30 * 86_400_000;

/** `raw` (the `pool:` block at `field`) resolved; throws ConfigFieldError naming the field. */
export function resolvePool(raw: z.infer<typeof PoolSchema> | undefined, field: string, source: string | null): PoolPolicy | undefined {
  if (raw === undefined) return undefined;
  if (!Number.isInteger(raw.size) || raw.size < 0 || raw.size > MAX_SIZE) throw new ConfigFieldError(`${field}.size`, `must be a whole number from 0 to ${MAX_SIZE}`, source);
  let maxAgeMs = DEFAULT_MAX_AGE_MS;
  if (raw.max_age !== undefined) {
    const ms = parseDuration(raw.max_age);
    if (ms === null) throw new ConfigFieldError(`${field}.max_age`, 'must be a duration such as 1h or 30m', source);
    if (ms < MIN_AGE_MS || ms > MAX_AGE_MS) throw new ConfigFieldError(`${field}.max_age`, 'must be between 1m and 30d', source);
    maxAgeMs = ms;
  }
  return { size: raw.size, maxAgeMs };
}
