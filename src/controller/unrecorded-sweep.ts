/**
 * The executors' sweeps of objects no session records (see Executor.startSweeps), started once
 * recovery has settled the sessions a restart interrupted. What "a session still claims it" means
 * is decided here, from the inventory as it is at each question:
 * - a runtime row records the object's instance (a ready, stopped or provisional session: its own
 *   cleanup deletes it by the recorded UID), or
 * - a warm pool member row has the owner's instance id as its id (a member's objects carry its id as
 *   owner until a session claims it; its pool deletes them with the row), or
 * - its session exists and is not settled (`launching`, `ready`, `stopping`, `removing`): a launch,
 *   stop or remove may be working on it right now.
 * A `failed`, `stopped` or `suspended` session whose row does not record the instance (its launch was rolled
 * back, or recovery released the row before a late create committed) claims nothing.
 * @module
 */
import type { SweepOwner } from '../executors/executor.js';
import type { Inventory } from '../inventory/index.js';
import type { ManagerContext } from './context.js';

const SETTLED = new Set(['failed', 'stopped', 'suspended']);

/** Whether a session of `store` still claims an object of `owner` (the sweep never touches it then). */
export async function isClaimed(store: Pick<Inventory, 'listRuntime' | 'getSession' | 'getPoolMember'>, owner: SweepOwner): Promise<boolean> {
  if ((await store.listRuntime()).some((r) => r.instanceId === owner.instanceId)) return true;
  if ((await store.getPoolMember(owner.instanceId)) !== null) return true;
  const session = await store.getSession(owner.sessionId);
  return session !== null && !SETTLED.has(session.state);
}

/** Starts every executor's sweeps; the returned function stops them all (awaiting sweeps in flight). */
export function startUnrecordedSweeps(ctx: Pick<ManagerContext, 'executors' | 'store'>): () => Promise<void> {
  const stops = [...ctx.executors.values()].flatMap((e) => (e.startSweeps ? [e.startSweeps((owner) => isClaimed(ctx.store, owner))] : []));
  return async () => {
    await Promise.allSettled(stops.map((stop) => stop()));
  };
}
