/**
 * What a warm pool of one profile works with (its members are made, claimed and removed with it).
 * @module
 */
import type { PoolStore } from '../../pool.js';
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
}
