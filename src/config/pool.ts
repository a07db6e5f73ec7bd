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
  /** A repository every member keeps a clone of (public: the member clones it with no credential). */
  repository: z.string({ error: 'must be a clone URL' }).optional(),
  /** The branch the members check out. @default the repository's default branch */
  branch: z.string({ error: 'must be a branch name' }).optional(),
  /** How often a member fetches its repository. @default 10m */
  refresh: z.string({ error: 'must be a duration such as 10m' }).optional(),
});

/** The resolved `pool:` block. */
export interface PoolPolicy {
  size: number;
  maxAgeMs: number;
  /** Members keep a clone of this repository, fetched every `refreshMs`; null: members hold none. */
  repository: { url: string; branch: string | null; refreshMs: number } | null;
}

/** A larger pool is a misconfiguration on one cluster's quota (each member holds a Pod and a volume). */
const MAX_SIZE = 50;
const DEFAULT_MAX_AGE_MS = 86_400_000;
/** Shorter than this, members are replaced faster than they are made. */
const MIN_AGE_MS = 60_000;
const MAX_AGE_MS = 30 * 86_400_000;
const DEFAULT_REFRESH_MS = 600_000;

/** `url` as a member can clone it: a URL (https, http, git, ssh, file) or scp-like `host:path`, with no credential in it. */
function repositoryProblem(url: string): string | null {
  const u = url.trim();
  if (u === '' || u.startsWith('-') || /\s/.test(u)) return 'must be a clone URL';
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(u)?.[1]?.toLowerCase();
  if (scheme === undefined) return /^[^/:]+:[^/]/.test(u) ? null : 'must be a clone URL (https://, git://, ssh:// or host:path)';
  if (!['https', 'http', 'git', 'ssh', 'file'].includes(scheme)) return `must be an https, http, git, ssh or file URL (not ${scheme}://)`;
  if (scheme !== 'ssh' && /^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(u)) return 'must not carry credentials: members clone it with none (a pool is for a repository they can read)';
  return null;
}

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
  return { size: raw.size, maxAgeMs, repository: resolveRepository(raw, field, source) };
}

function resolveRepository(raw: z.infer<typeof PoolSchema>, field: string, source: string | null): PoolPolicy['repository'] {
  if (raw.repository === undefined) {
    for (const key of ['branch', 'refresh'] as const) if (raw[key] !== undefined) throw new ConfigFieldError(`${field}.${key}`, 'is only allowed with pool.repository', source);
    return null;
  }
  const problem = repositoryProblem(raw.repository);
  if (problem !== null) throw new ConfigFieldError(`${field}.repository`, problem, source);
  const branch = raw.branch ?? null;
  if (branch !== null && (branch === '' || branch.startsWith('-') || /[\s\0]/.test(branch))) throw new ConfigFieldError(`${field}.branch`, 'must be a branch name', source);
  let refreshMs = DEFAULT_REFRESH_MS;
  if (raw.refresh !== undefined) {
    const ms = parseDuration(raw.refresh);
    if (ms === null) throw new ConfigFieldError(`${field}.refresh`, 'must be a duration such as 10m', source);
    if (ms < MIN_AGE_MS || ms > 86_400_000) throw new ConfigFieldError(`${field}.refresh`, 'must be between 1m and 24h', source);
    refreshMs = ms;
  }
  return { url: raw.repository.trim(), branch, refreshMs };
}
