/**
 * What a warm pool of one profile works with (its members are made, claimed and removed with it).
 * @module
 */
import { createHash } from 'node:crypto';
import type { V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
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
  /** The executor's Pods and PVCs as the pool's latest pass listed them (every few seconds), by name. */
  seen: SeenObjects;
}

/**
 * Objects as last listed. A claim relabels a member pinned to the resourceVersion listed here, which
 * saves reading it first: the API server applies the patch only if the object has not changed since,
 * so the checks made on the listed object still hold; after any change (409) it reads and checks again.
 */
export interface SeenObjects {
  pods: Map<string, V1Pod>;
  pvcs: Map<string, V1PersistentVolumeClaim>;
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
