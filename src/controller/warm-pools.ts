/**
 * Starts the warm pools (`profiles.<name>.pool`) on the executors that keep them, once recovery
 * has run (so a pool never races the recovery of a session that claimed one of its members). Each
 * executor gets every pooled profile of its own, with the profile's snapshot as a launch of it
 * would record it; an executor with none still starts (with none), so that members of profiles no
 * longer pooled are removed.
 * @module
 */
import type { PoolTarget } from '../executors/pool.js';
import type { ManagerContext } from './context.js';

/** Starts them; the returned function stops every refill (members stay recorded). */
export function startWarmPools(ctx: Pick<ManagerContext, 'config' | 'executors' | 'store' | 'snapshotProfile'>): () => Promise<void> {
  const stops: (() => Promise<void>)[] = [];
  for (const executor of ctx.executors.values()) {
    if (executor.startPools === undefined) continue;
    const targets: PoolTarget[] = [];
    for (const profile of Object.values(ctx.config.profiles)) {
      if (profile.executor !== executor.name || profile.pool === undefined) continue;
      targets.push({ snapshot: ctx.snapshotProfile(profile.name), size: profile.pool.size, maxAgeMs: profile.pool.maxAgeMs, repository: profile.pool.repository });
    }
    stops.push(executor.startPools(targets, ctx.store));
  }
  return async () => {
    await Promise.allSettled(stops.map((stop) => stop()));
  };
}
