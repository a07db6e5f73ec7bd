/**
 * The warm pools as the API shows them: every pooled profile of the config (and any profile whose
 * members are still recorded, e.g. one whose pool was removed from berth.yaml and is being emptied)
 * with its members from the inventory; and the removal of a profile's ready members, done by the
 * executor that keeps the pool.
 * @module
 */
import type { PoolMemberView, PoolRemoveResult, PoolView } from '../api/index.js';
import { META } from '../executors/kubernetes/constants.js';
import type { PoolMemberRecord } from '../inventory/index.js';
import type { ManagerContext } from './context.js';
import { PoolNotFoundError } from './service.js';

function memberView(row: PoolMemberRecord): PoolMemberView {
  const ns = row.metadata[META.namespace];
  const pod = row.metadata[META.podName];
  return { id: row.id, state: row.state, createdAt: row.createdAt, pod: ns !== undefined && pod !== undefined && row.metadata[META.podUid] !== undefined ? `${ns}/${pod}` : null };
}

export async function listPools(ctx: Pick<ManagerContext, 'config' | 'store'>): Promise<PoolView[]> {
  const rows = await ctx.store.listPoolMembers();
  const names = new Set([...Object.values(ctx.config.profiles).filter((p) => p.pool !== undefined).map((p) => p.name), ...rows.map((r) => r.profile)]);
  return [...names].sort().map((name) => {
    const profile = Object.values(ctx.config.profiles).find((p) => p.name === name);
    const members = rows.filter((r) => r.profile === name);
    const pool = profile?.pool;
    return {
      profile: name,
      executor: profile?.executor ?? members[0]?.executor ?? '',
      size: pool?.size ?? 0,
      maxAgeMs: pool?.maxAgeMs ?? 0,
      repository: pool?.repository ? { url: pool.repository.url, branch: pool.repository.branch } : null,
      ready: members.filter((m) => m.state === 'ready').length,
      creating: members.filter((m) => m.state === 'creating').length,
      members: members.map(memberView),
    };
  });
}

export async function removePool(ctx: Pick<ManagerContext, 'config' | 'store' | 'executors'>, profile: string): Promise<PoolRemoveResult> {
  const pools = await listPools(ctx);
  const pool = pools.find((p) => p.profile === profile);
  if (pool === undefined) throw new PoolNotFoundError(profile, pools.map((p) => p.profile));
  const executor = ctx.executors.get(pool.executor);
  const removed = executor?.removePoolMembers ? await executor.removePoolMembers(profile) : 0;
  return { profile, removed };
}
