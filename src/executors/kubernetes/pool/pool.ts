/**
 * The warm pools of one Kubernetes executor: per pooled profile, a refill loop that keeps `size`
 * ready members (pool/member.ts), never more, at most two being made at once, backing off from 1 s
 * to 60 s while members fail; that replaces members older than `max_age`, built from an earlier
 * version of the profile, or whose Pod stopped running; and that removes the members of profiles no
 * longer pooled. Members are inventory rows, so a restarted controller takes its pools over: a
 * member left `creating` by a dead controller is deleted, and one left `claimed` is either the
 * session's (its runtime row records the Pod: only the row goes) or deleted with its objects.
 * @module
 */
import type { V1Pod } from '@kubernetes/client-node';
import { errorMessage } from '../../../shared/errors.js';
import type { Logger } from '../../../shared/logger.js';
import type { PoolMemberRow, PoolStore, PoolTarget } from '../../pool.js';
import { decodeProfileSnapshot, profileHash } from '../config/index.js';
import { memberFetchScript } from '../compose/index.js';
import { LABEL, LABEL_VALUE, META } from '../constants.js';
import type { KubeLaunchEnv } from '../launch/context.js';
import { PROFILE_SETTING } from '../stop.js';
import { memberHash, type PoolContext, type SeenObjects } from './context.js';
import { provisionMember } from './member.js';
import { retireMember, rowTargets } from './retire.js';

const TICK_MS = 5000;
const MAX_PARALLEL = 2;
const BACKOFF_MIN_MS = 1000;
const BACKOFF_MAX_MS = 60_000;
/**
 * A claim holds its row for one relabel and one checkpoint; one still `claimed` after this long was
 * cut short without a restart (a store write whose answer was lost, retried as a second claim).
 */
const STUCK_CLAIM_MS = 120_000;
/** How long after the last launch of a burst the refill starts. */
const REFILL_AFTER_LAUNCH_MS = 500;

interface ProfilePool {
  ctx: PoolContext;
  size: number;
  maxAgeMs: number;
  hash: string;
  /** Members this process is making. */
  making: Set<Promise<void>>;
  failures: number;
  notBefore: number;
  /** Repository pools: when each ready member last fetched (absent: when it was made). */
  fetched: Map<string, number>;
}

export class WarmPools {
  readonly #env: KubeLaunchEnv;
  readonly #store: PoolStore;
  readonly #log: Logger;
  readonly #pools = new Map<string, ProfilePool>();
  readonly #stop = new AbortController();
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #again = false;
  #first = true;
  /** Launches of a pooled profile running now, warm or cold: the refill waits for them (making a member takes the CPU and API calls a launch needs). */
  #launching = 0;
  /** What the latest pass listed, shared with the claims (PoolContext.seen). */
  readonly #seen: SeenObjects = { pods: new Map(), pvcs: new Map() };

  constructor(env: KubeLaunchEnv, store: PoolStore, namespace: string, targets: readonly PoolTarget[]) {
    this.#env = env;
    this.#store = store;
    this.#log = env.log;
    const agentctl = env.artifacts.build();
    for (const t of targets) {
      const name = t.snapshot.profile;
      const snapshot = t.snapshot.settings[PROFILE_SETTING];
      if (name === null || snapshot === undefined) continue;
      const profile = decodeProfileSnapshot(snapshot);
      const ctx: PoolContext = { env, store, profileName: name, profile, settings: t.snapshot.settings, namespace, repository: t.repository, agentctl, seen: this.#seen };
      this.#pools.set(name, { ctx, size: t.size, maxAgeMs: t.maxAgeMs, hash: memberHash(ctx, profileHash(profile)), making: new Set(), failures: 0, notBefore: 0, fetched: new Map() });
    }
  }

  /** The pool a fresh launch of `profile` claims from; undefined when the profile has none (or size 0). */
  context(profile: string | null): PoolContext | undefined {
    const pool = profile === null ? undefined : this.#pools.get(profile);
    return pool !== undefined && pool.size > 0 ? pool.ctx : undefined;
  }

  start(): void {
    this.kick();
  }

  /**
   * Runs a launch someone waits for (a claim, a cold launch of any profile, a resume); no member is
   * started meanwhile, and the refill runs a moment after the last launch ended (the next of a
   * burst usually follows at once).
   */
  async launching<T>(launch: () => Promise<T>): Promise<T> {
    this.#launching++;
    try {
      return await launch();
    } finally {
      this.#launching--;
      if (this.#launching === 0 && !this.#stop.signal.aborted) setTimeout(() => this.#launching === 0 && this.kick(), REFILL_AFTER_LAUNCH_MS).unref();
    }
  }

  /** Runs a reconcile soon (after a claim, a member made or failed); one at a time. */
  kick(): void {
    if (this.#stop.signal.aborted) return;
    if (this.#running !== null) {
      this.#again = true;
      return;
    }
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#running = this.#reconcile()
      .catch((err: unknown) => this.#log.warn({ err: errorMessage(err) }, 'warm pool: reconcile failed; retrying'))
      .finally(() => {
        this.#running = null;
        if (this.#stop.signal.aborted) return;
        if (this.#again) {
          this.#again = false;
          this.kick();
        } else {
          this.#timer = setTimeout(() => this.kick(), TICK_MS);
          this.#timer.unref();
        }
      });
  }

  /**
   * Deletes the ready members of `profile` (any profile with recorded members: a pool no longer
   * configured too) and refills; returns how many went. A member a launch took meanwhile is left to it.
   */
  async removeReady(profile: string): Promise<number> {
    let removed = 0;
    for (const row of await this.#store.listPoolMembers({ executor: this.#env.executorName, profile })) {
      if (row.state === 'ready' && (await this.#retire(row, 'its pool was emptied (berth pool rm)'))) removed++;
    }
    this.kick();
    return removed;
  }

  /** Stops the refills; members being made are abandoned (and deleted) before it resolves. */
  async stop(): Promise<void> {
    this.#stop.abort();
    if (this.#timer !== null) clearTimeout(this.#timer);
    await this.#running;
    await Promise.allSettled([...this.#pools.values()].flatMap((p) => [...p.making]));
  }

  async #reconcile(): Promise<void> {
    const first = this.#first;
    this.#first = false;
    const rows = await this.#store.listPoolMembers({ executor: this.#env.executorName });
    for (const row of rows) {
      const pool = this.#pools.get(row.profile);
      if (pool === undefined) await this.#retire(row, 'its profile has no pool any more');
      else if (row.state === 'claimed' && (first || Date.now() - Date.parse(row.updatedAt) > STUCK_CLAIM_MS)) await this.#settleClaimed(row);
      else if (row.state === 'creating' && first) await this.#retire(row, 'a controller stopped while making it');
    }
    for (const pool of this.#pools.values()) await this.#reconcileProfile(pool, rows.filter((r) => r.profile === pool.ctx.profileName));
  }

  async #reconcileProfile(pool: ProfilePool, rows: PoolMemberRow[]): Promise<void> {
    for (const id of pool.fetched.keys()) if (!rows.some((r) => r.id === id && r.state === 'ready')) pool.fetched.delete(id);
    const kept: PoolMemberRow[] = [];
    for (const row of rows.filter((r) => r.state === 'ready')) {
      const stale = row.profileHash !== pool.hash ? 'it was made from an earlier version of the profile or by another agentctl build' : Date.now() - Date.parse(row.createdAt) > pool.maxAgeMs ? 'it reached max_age' : null;
      const gone = stale ?? (kept.length >= pool.size ? 'the pool is larger than its size' : null);
      if (gone !== null) await this.#retire(row, gone);
      else kept.push(row);
    }
    // the refill first: a launch that just found the pool empty waits for nothing else
    this.#refill(pool, kept.length);
    if (kept.length === 0) return;
    const pods = await this.#memberPods(pool.ctx.namespace);
    for (const row of kept) {
      const trouble = podTrouble(pool, row, pods.get(row.metadata[META.podName] ?? ''));
      if (trouble === null) await this.#fetchIfDue(pool, row);
      else if (await this.#retire(row, trouble)) this.kick(); // the next pass replaces it
    }
  }

  #refill(pool: ProfilePool, ready: number): void {
    if (this.#launching > 0) return;
    const wanted = pool.size - ready - pool.making.size;
    if (wanted <= 0 || Date.now() < pool.notBefore) return;
    for (let i = 0; i < Math.min(wanted, MAX_PARALLEL - pool.making.size); i++) this.#make(pool);
  }

  /** The executor's Pods in `namespace` by name: one list per pass, however many members (its PVCs listed alongside, for the claims). */
  async #memberPods(namespace: string): Promise<Map<string, V1Pod>> {
    const selector = `${LABEL.managedBy}=${LABEL_VALUE.managedBy},${LABEL.executor}=${this.#env.executorName}`;
    const signal = AbortSignal.timeout(10_000);
    const [pods, pvcs] = await Promise.all([this.#env.kube.objects.listPods(namespace, selector, signal), this.#env.kube.objects.listPvcs(namespace, selector, signal)]);
    const byName = <T extends { metadata?: { name?: string } }>(items: T[]): [string, T][] => items.map((o) => [o.metadata?.name ?? '', o]);
    replaceAll(this.#seen.pods, byName(pods.items));
    replaceAll(this.#seen.pvcs, byName(pvcs.items));
    return new Map(this.#seen.pods);
  }

  #make(pool: ProfilePool): void {
    const making = provisionMember(pool.ctx, this.#stop.signal).then(
      (id) => {
        pool.failures = 0;
        this.#log.info({ profile: pool.ctx.profileName, member: id }, 'warm pool: member ready');
      },
      (err: unknown) => {
        if (this.#stop.signal.aborted) return;
        pool.failures++;
        const wait = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** (pool.failures - 1));
        pool.notBefore = Date.now() + wait;
        this.#log.warn({ profile: pool.ctx.profileName, err: errorMessage(err), retryInMs: wait }, 'warm pool: making a member failed');
      },
    );
    pool.making.add(making);
    void making.finally(() => {
      pool.making.delete(making);
      this.kick();
    });
  }

  /** A repository pool's member fetches its clone every `refreshMs` (best effort: a claim fetches anyway). */
  async #fetchIfDue(pool: ProfilePool, row: PoolMemberRow): Promise<void> {
    const repo = pool.ctx.repository;
    if (repo === null || Date.now() - (pool.fetched.get(row.id) ?? Date.parse(row.createdAt)) < repo.refreshMs) return;
    pool.fetched.set(row.id, Date.now());
    try {
      const res = await this.#env.kube.exec.exec({
        namespace: pool.ctx.namespace,
        pod: row.metadata[META.podName] ?? '',
        container: pool.ctx.profile.mainContainer,
        command: ['sh', '-c', memberFetchScript()],
        signal: AbortSignal.timeout(pool.ctx.profile.budgets.cloneSeconds * 1000),
      });
      if (res.exitCode !== 0) this.#log.warn({ profile: row.profile, member: row.id, stderr: res.stderr.trim().slice(-300) }, 'warm pool: a member could not fetch its repository');
    } catch (err) {
      this.#log.warn({ profile: row.profile, member: row.id, err: errorMessage(err) }, 'warm pool: a member could not fetch its repository');
    }
  }

  /** A claim a crash cut short: the session's when its runtime row records the Pod, else deleted. */
  async #settleClaimed(row: PoolMemberRow): Promise<void> {
    const runtime = row.sessionId === null ? null : await this.#store.getRuntime(row.sessionId);
    if (runtime !== null && runtime.metadata[META.podUid] === row.metadata[META.podUid]) {
      await this.#store.deletePoolMember(row.id);
      return;
    }
    await this.#retire(row, 'a claim was cut short before the session recorded it');
  }

  /** Removes a member; false when a launch took it first (or a delete failed: its row stays for the next pass). */
  async #retire(row: PoolMemberRow, why: string): Promise<boolean> {
    // a ready member is first made unclaimable: a launch that took it meanwhile keeps it
    if (row.state === 'ready' && (await this.#store.updatePoolMember(row.id, { state: 'creating' }, { state: 'ready' })) === null) return false;
    this.#log.info({ profile: row.profile, member: row.id, why }, 'warm pool: removing a member');
    return retireMember({ env: this.#env, store: this.#store }, row.id, rowTargets(row.metadata));
  }
}

/** Why a ready member can no longer be handed out (its Pod as listed), or null. */
function podTrouble(pool: ProfilePool, row: PoolMemberRow, pod: V1Pod | undefined): string | null {
  if (pod === undefined || pod.metadata?.uid !== row.metadata[META.podUid]) return 'its Pod is gone';
  if (pod.metadata?.deletionTimestamp || pod.status?.phase !== 'Running') return `its Pod is ${pod.metadata?.deletionTimestamp ? 'being deleted' : (pod.status?.phase ?? 'unknown')}`;
  const main = pod.status?.containerStatuses?.find((c) => c.name === pool.ctx.profile.mainContainer);
  if ((main?.restartCount ?? 0) !== Number(row.metadata[META.restartCount] ?? '0')) return 'its main container restarted';
  return null;
}

function replaceAll<K, V>(map: Map<K, V>, entries: [K, V][]): void {
  map.clear();
  for (const [k, v] of entries) map.set(k, v);
}
