/**
 * What a warm pool of one profile works with (its members are made, claimed and removed with it).
 * @module
 */
import { createHash } from 'node:crypto';
import type { PoolRepository, PoolStore } from '../../pool.js';
import type { KubeLaunchEnv } from '../launch/context.js';
import type { KubernetesProfile } from '../types.js';

/** Everything a pool of one profile works with. */
export interface PoolContext {
  env: KubeLaunchEnv;
  store: PoolStore;
  /** The profile (launch target) name. */
  profileName: string;
  profile: KubernetesProfile;
  /** The snapshot settings a launch of the profile records (the member's request carries them). */
  settings: Readonly<Record<string, string>>;
  namespace: string;
  /** The repository members keep a clone of; null: none. */
  repository: PoolRepository | null;
  /** The agentctl build members are made with (AgentctlArtifacts.build). */
  agentctl: string;
}

/**
 * What a member is made of, as its row records it: the profile's hash, the agentctl build, and with
 * a repository pool the repository and branch (a claim asks for the current one: a changed pool
 * repository or an upgraded controller replaces the members, as a changed profile does).
 */
export function memberHash(p: Pick<PoolContext, 'repository' | 'agentctl'>, profileHash: string): string {
  const repo = p.repository === null ? null : [p.repository.url, p.repository.branch];
  return createHash('sha256').update(JSON.stringify([profileHash, p.agentctl, repo])).digest('hex');
}
