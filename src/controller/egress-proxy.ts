/**
 * The egress proxy `berth serve` runs (config `egress.listen`), over the inventory: a session is
 * found by its token's digest (cached for at most {@link CACHE_MS}, so a revoked token stops working
 * within a second even on another replica), its allow list and brokers read from the stored policy;
 * every connection's record is written to the inventory in batches. The brokers' keys are read from
 * serve's environment at each request, under the secret name the profiles map the provider to.
 * @module
 */
import { chmodSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import { dirname } from 'node:path';
import { usesEgressProxy } from '../executors/network.js';
import { ownValue } from '../shared/own.js';
import { allowMatcher, BROKER_PRESETS, createEgressProxy, parseAllowList, type BrokerProvider, type EgressProxy, type EgressRecord, type EgressSession, type ProxyCredential } from '../egress/index.js';
import type { ResolvedConfig } from '../config/index.js';
import type { EgressRecordInput, Inventory } from '../inventory/index.js';
import { errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { egressTokenDigest, type StoredEgressPolicy } from './egress.js';

/** How long a looked-up credential (or its absence) is trusted. */
const CACHE_MS = 500;
const FLUSH_MS = 1000;
/** Records held for the next write at most (more are dropped, and counted in the log). */
const MAX_PENDING = 10_000;
const CONNECT_TIMEOUT_MS = 10_000;
const RECHECK_MS = 1000;
const IDLE_TIMEOUT_MS = 300_000;

interface RunningEgressProxy {
  readonly port: number;
  revoke(sessionId: string): void;
  close(): Promise<void>;
}

/**
 * Starts the proxy on `egress.listen` (Pods), and on `socketPath` when a profile of a local executor
 * uses it (sandboxes reach it through their agentctl's relay); null when neither is wanted.
 */
export async function startEgressProxy(
  config: ResolvedConfig,
  store: Inventory,
  secretSource: (name: string) => string | undefined,
  log: Logger,
  opts: { socketPath?: string | null } = {},
): Promise<RunningEgressProxy | null> {
  const egress = config.egress;
  const socketPath = localProxyWanted(config) ? (opts.socketPath ?? null) : null;
  if (egress.listen === null && socketPath === null) return null;
  const cache = new Map<string, { at: number; session: EgressSession | null }>();
  /** Sessions let through lately, by token digest: re-checked every second (a revocation by another process). */
  const active = new Map<string, string>();
  const lookup = async (credential: ProxyCredential): Promise<EgressSession | null> => {
    const digest = egressTokenDigest(credential.token);
    const now = Date.now();
    let hit = cache.get(digest);
    if (hit === undefined || now - hit.at > CACHE_MS) {
      hit = { at: now, session: sessionOf(await store.findEgressCredential(digest)) };
      if (cache.size > 10_000) cache.clear();
      cache.set(digest, hit);
    }
    if (hit.session !== null && credential.username !== null && decodeURIComponent(credential.username) !== hit.session.sessionId) return null;
    if (hit.session !== null) active.set(digest, hit.session.sessionId);
    return hit.session;
  };
  const writer = new RecordWriter(store, log);
  const proxy: EgressProxy = createEgressProxy({
    sessions: { lookup },
    record: (r) => writer.add(r),
    connectTimeoutMs: CONNECT_TIMEOUT_MS,
    idleTimeoutMs: IDLE_TIMEOUT_MS,
    resolveUpstream: (host, port) => ({ host: egress.hosts[host.toLowerCase()] ?? host, port }),
    brokers: brokersOf(config, secretSource),
    ...(egress.caFile !== null ? { upstreamCa: readFileSync(egress.caFile) } : {}),
  });
  let port = 0;
  if (egress.listen !== null) {
    const at = egress.listen;
    await new Promise<void>((resolve, reject) => {
      proxy.server.once('error', reject);
      proxy.server.listen(at.port, at.host, () => resolve());
    });
    const address = proxy.server.address();
    port = typeof address === 'object' && address !== null ? address.port : 0;
    log.info({ host: at.host, port }, 'egress proxy listening');
  }
  const local = socketPath === null ? null : await listenOnSocket(proxy, socketPath);
  const recheck = setInterval(() => void revokeGone(store, active, cache, proxy, log), RECHECK_MS);
  recheck.unref();
  return {
    port,
    revoke: (sessionId) => {
      for (const [digest, entry] of cache) if (entry.session?.sessionId === sessionId) cache.delete(digest);
      for (const [digest, id] of active) if (id === sessionId) active.delete(digest);
      proxy.revoke(sessionId);
    },
    close: async () => {
      clearInterval(recheck);
      if (local !== null) await new Promise<void>((resolve) => local.close(() => resolve()));
      await proxy.close();
      await writer.close();
    },
  };
}

/** Whether a profile of a local executor has network settings that use the proxy. */
function localProxyWanted(config: ResolvedConfig): boolean {
  return Object.values(config.profiles).some((p) => p.network !== undefined && usesEgressProxy(p.network) && ownValue(config.executors, p.executor)?.type === 'local');
}

/** A Unix socket (0600, in a folder of its own) whose connections the proxy's HTTP server serves. */
async function listenOnSocket(proxy: EgressProxy, path: string): Promise<NetServer> {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  rmSync(path, { force: true });
  const server = createNetServer((socket) => proxy.server.emit('connection', socket));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => resolve());
  });
  chmodSync(path, 0o600);
  return server;
}

/**
 * Closes the open connections of sessions whose credential is gone from the store (stopped or
 * removed through another controller process than this proxy's: the chart's proxy Deployment).
 */
async function revokeGone(store: Inventory, active: Map<string, string>, cache: Map<string, unknown>, proxy: EgressProxy, log: Logger): Promise<void> {
  for (const [digest, sessionId] of [...active]) {
    try {
      const found = await store.findEgressCredential(digest);
      if (found?.sessionId === sessionId) continue;
      active.delete(digest);
      cache.delete(digest);
      const closed = proxy.revoke(sessionId);
      if (closed > 0) log.info({ session: sessionId, closed }, "egress: a revoked session's connections closed");
    } catch (err) {
      log.warn({ err: errorMessage(err) }, 'egress: the credential re-check failed');
      return;
    }
  }
}

function sessionOf(found: { sessionId: string; policy: string } | null): EgressSession | null {
  if (found === null) return null;
  let policy: StoredEgressPolicy;
  try {
    policy = JSON.parse(found.policy) as StoredEgressPolicy;
  } catch {
    return null;
  }
  const allow = allowMatcher(parseAllowList(policy.allow ?? [], 'network.allow'));
  return { sessionId: found.sessionId, allow, brokers: new Set(Object.keys(policy.brokers ?? {})) };
}

/** The providers some profile brokers, each reading its key from the secret name the profiles give it. */
function brokersOf(config: ResolvedConfig, secretSource: (name: string) => string | undefined): Record<string, BrokerProvider> {
  const out: Record<string, BrokerProvider> = {};
  for (const profile of Object.values(config.profiles)) {
    for (const [provider, secret] of Object.entries(profile.network?.brokers ?? {})) {
      const preset = (BROKER_PRESETS as Record<string, { upstream: string; auth: 'x-api-key' | 'bearer' }>)[provider];
      if (preset === undefined || out[provider] !== undefined) continue;
      out[provider] = { ...preset, upstream: config.egress.brokers[provider]?.upstream ?? preset.upstream, key: () => secretSource(secret) };
    }
  }
  return out;
}

/** Batches records into the inventory (one write per second at most); a failed write is logged and dropped. */
class RecordWriter {
  #pending: EgressRecordInput[] = [];
  #dropped = 0;
  #timer: NodeJS.Timeout | null = null;
  #writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Inventory,
    private readonly log: Logger,
  ) {}

  add(r: EgressRecord): void {
    if (r.sessionId === null) return; // no session to file it under: a request without a valid credential
    if (this.#pending.length >= MAX_PENDING) {
      this.#dropped += 1;
      return;
    }
    this.#pending.push({
      sessionId: r.sessionId,
      host: r.host === '' ? '-' : r.host,
      port: r.port,
      method: r.method === '' ? '-' : r.method,
      allowed: r.allowed,
      reason: r.reason ?? null,
      status: r.status ?? null,
      bytesUp: r.bytesUp,
      bytesDown: r.bytesDown,
      startedAt: r.startedAt,
      endedAt: r.endedAt,
      broker: r.broker?.provider ?? null,
      inputTokens: r.broker?.inputTokens ?? null,
      outputTokens: r.broker?.outputTokens ?? null,
    });
    this.#timer ??= setTimeout(() => this.#flush(), FLUSH_MS);
  }

  #flush(): void {
    this.#timer = null;
    const batch = this.#pending;
    this.#pending = [];
    const dropped = this.#dropped;
    this.#dropped = 0;
    if (dropped > 0) this.log.warn({ dropped }, 'egress records dropped: the inventory could not keep up');
    if (batch.length === 0) return;
    this.#writing = this.#writing.then(async () => {
      try {
        await this.store.appendEgressRecords(batch);
      } catch (err) {
        this.log.warn({ err: errorMessage(err), records: batch.length }, 'egress records could not be written');
      }
    });
  }

  async close(): Promise<void> {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#flush();
    await this.#writing;
  }
}
