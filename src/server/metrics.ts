/**
 * The controller's Prometheus metrics (`GET /metrics`, text format, prom-client) on a registry of
 * its own: launch stage durations, sessions by state, reconnects, replacements and agent restarts,
 * API request durations, readiness, and the process's default metrics. Every label value the
 * config makes known (each launch target and the stages of its executor type, each session state)
 * is created at 0 up front, so a scrape before the first launch already shows the series. No
 * label value or help text carries a secret: labels are config names, stage names and states.
 * What feeds them from the controller's events is `metrics-observer.ts`.
 * @module
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { matchRoute } from '../api/index.js';
import type { RequestOutcome } from '../shared/http/index.js';

/** A name a launch may give as its executor (an executor entry or a profile), with what it runs on. */
export interface MetricTarget {
  /** What a session records as its executor (`SessionView.executor`). */
  readonly name: string;
  /** The executor entry of berth.yaml it runs on. */
  readonly executor: string;
  /** The profile (`''`: the executor entry used directly). */
  readonly profile: string;
  readonly type: 'local' | 'kubernetes';
}

/**
 * The stages each executor type reports, in order (`initialize` and `agent_start` are the
 * controller's; `pod_replaced` records a Pod replacement). A stage not listed is still recorded,
 * from its first occurrence. `test/integration/api/metrics.test.ts` keeps this in step with the executors.
 */
export const KNOWN_STAGES: Readonly<Record<MetricTarget['type'], readonly string[]>> = {
  local: ['initialize', 'workspace', 'agentctl_start', 'agentctl_connect', 'agent_start'],
  kubernetes: ['initialize', 'storage', 'pod_ready', 'bootstrap', 'agentctl_connect', 'agent_start', 'pod_replaced'],
};

const SESSION_STATES = ['launching', 'ready', 'stopping', 'stopped', 'suspended', 'failed', 'removing'] as const;
const OUTCOMES = ['succeeded', 'failed'] as const;

/** Stage durations run from milliseconds (a local workspace) to minutes (an image pull). */
const STAGE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
/** API requests: most answer in milliseconds; streams (logs -f, events) last as long as the client stays. */
/** Store calls: a checkpoint is a millisecond or few on a healthy store; a Postgres reconnect, seconds. */
const STORE_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 15];

const REQUEST_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** The `operation` label of a request: its route table operation, `dashboard` (the web app's files) or `unmatched`. */
export function requestOperation(method: string | undefined, path: string | undefined): string {
  if (method === undefined || path === undefined) return 'unmatched';
  const m = matchRoute(method === 'HEAD' ? 'GET' : method, path);
  if ('operation' in m) return m.operation;
  const api = path === '/api' || path.startsWith('/api/');
  return !api && (method === 'GET' || method === 'HEAD') ? 'dashboard' : 'unmatched';
}

/** `2xx`, `4xx` …: the `status_class` label. */
export const statusClass = (status: number): string => `${Math.floor(status / 100)}xx`;

/** The `executor` and `profile` labels of a session's executor name (an unknown name: itself, no profile). */
export function targetLabels(targets: ReadonlyMap<string, MetricTarget>, name: string): { executor: string; profile: string } {
  const t = targets.get(name);
  return t ? { executor: t.executor, profile: t.profile } : { executor: name, profile: '' };
}

interface ServerMetricsOptions {
  readonly targets: readonly MetricTarget[];
  readonly version: string;
  /** Also the process's default metrics (CPU, memory, event loop, GC). @default true */
  readonly defaultMetrics?: boolean;
}

/** The diagnostic reasons (`SessionEvent` type `diagnostic`) that a per-target counter counts. */
const TARGET_COUNTERS: Readonly<Record<string, { name: string; help: string }>> = {
  Reconnecting: {
    name: 'berth_session_reconnects_total',
    help: "Reports that a ready session's agentctl was unreachable and the controller re-attaches it (diagnostic Reconnecting)",
  },
  Replaced: { name: 'berth_session_replacements_total', help: "Replacements of a ready session's machine (a Pod deleted, evicted or failed) the controller took over" },
  AgentRestarted: { name: 'berth_agent_restarts_total', help: 'Agents started again in the new machine after a replacement' },
  WarmLaunch: { name: 'berth_pool_warm_launches_total', help: "Launches of a pooled profile served by a ready member of its warm pool (diagnostic WarmLaunch)" },
  ColdLaunch: { name: 'berth_pool_cold_launches_total', help: 'Launches of a pooled profile that went cold: the pool was empty or its member failed (diagnostic ColdLaunch, with the reason)' },
};

/** Diagnostic reasons shown at 0 before they first occur. */
const KNOWN_DIAGNOSTICS = ['Reconnecting', 'ReconnectFailed', 'Replaced', 'AgentRestarted', 'AgentLost', 'HealFailed', 'WorkspaceLost', 'WarmLaunch', 'ColdLaunch'];
/** Distinct diagnostic reasons kept as label values; later ones (and odd spellings) count as `Other`. */
const MAX_DIAGNOSTIC_REASONS = 64;
const REASON_SHAPE = /^[A-Za-z][A-Za-z0-9_]{0,63}$/;

type TargetLabel = 'executor' | 'profile';

export class ServerMetrics {
  readonly registry = new Registry();
  readonly #targets: ReadonlyMap<string, MetricTarget>;
  readonly #stage: Histogram<TargetLabel | 'stage' | 'outcome'>;
  readonly #sessions: Gauge<'state'>;
  readonly #byReason = new Map<string, Counter<TargetLabel>>();
  readonly #diagnostics: Counter<'reason'>;
  readonly #reasons = new Set<string>();
  readonly #requests: Histogram<'operation' | 'status_class'>;
  readonly #ready: Gauge;
  readonly #store: Histogram<'backend' | 'op' | 'outcome'>;
  readonly #leader: Gauge;

  constructor(opts: ServerMetricsOptions) {
    const registers = [this.registry];
    this.#targets = new Map(opts.targets.map((t) => [t.name, t]));
    this.#stage = new Histogram({
      name: 'berth_launch_stage_duration_seconds',
      help: 'Duration of each stage of a launch or resume, by executor entry, profile (empty: none), stage and outcome',
      labelNames: ['executor', 'profile', 'stage', 'outcome'],
      buckets: STAGE_BUCKETS,
      registers,
    });
    this.#sessions = new Gauge({ name: 'berth_sessions', help: 'Sessions by state', labelNames: ['state'], registers });
    for (const [reason, { name, help }] of Object.entries(TARGET_COUNTERS)) this.#byReason.set(reason, new Counter({ name, help, labelNames: ['executor', 'profile'], registers }));
    this.#diagnostics = new Counter({ name: 'berth_session_diagnostics_total', help: 'Diagnostics the controller reported about sessions, by reason', labelNames: ['reason'], registers });
    this.#requests = new Histogram({
      name: 'berth_http_request_duration_seconds',
      help: 'API request durations by route operation and status class (streams count until they end)',
      labelNames: ['operation', 'status_class'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.#ready = new Gauge({ name: 'berth_ready', help: 'Whether the controller takes requests (1) or not (0: starting, standby, stopping), as /readyz answers', registers });
    this.#store = new Histogram({
      name: 'berth_store_operation_duration_seconds',
      help: 'Inventory calls by backend (sqlite, postgres), operation (upsertRuntime is one checkpoint) and outcome; writes are durable when they end',
      labelNames: ['backend', 'op', 'outcome'],
      buckets: STORE_BUCKETS,
      registers,
    });
    this.#leader = new Gauge({
      name: 'berth_leader',
      help: 'Whether this replica holds the controller Lease (1) or is a standby (0); 1 when serve runs without leader election',
      registers,
    });
    new Gauge({ name: 'berth_build_info', help: 'The running berth version', labelNames: ['version'], registers }).set({ version: opts.version }, 1);
    this.#precreate(opts.targets);
    if (opts.defaultMetrics ?? true) collectDefaultMetrics({ register: this.registry });
  }

  /** One ended stage of a session launched on `executorName` (`SessionView.executor`). */
  observeStage(executorName: string, stage: string, outcome: 'succeeded' | 'failed', seconds: number): void {
    this.#stage.observe({ ...targetLabels(this.#targets, executorName), stage, outcome }, seconds);
  }

  /** The number of sessions in each state (states absent from `counts` are 0). */
  setSessionCounts(counts: ReadonlyMap<string, number>): void {
    for (const state of new Set([...SESSION_STATES, ...counts.keys()])) this.#sessions.set({ state }, counts.get(state) ?? 0);
  }

  /** A diagnostic the controller reported about a session launched on `executorName`. */
  countDiagnostic(executorName: string, reason: string): void {
    this.#byReason.get(reason)?.inc(targetLabels(this.#targets, executorName));
    const known = this.#reasons.has(reason) || (REASON_SHAPE.test(reason) && this.#reasons.size < MAX_DIAGNOSTIC_REASONS);
    if (known) this.#reasons.add(reason);
    this.#diagnostics.inc({ reason: known ? reason : 'Other' });
  }

  observeRequest(outcome: RequestOutcome): void {
    this.#requests.observe({ operation: requestOperation(outcome.method, outcome.path), status_class: statusClass(outcome.status) }, outcome.ms / 1000);
  }

  /** One inventory call (see `timeInventory`). */
  observeStore(backend: string, op: string, ok: boolean, seconds: number): void {
    this.#store.observe({ backend, op, outcome: ok ? 'ok' : 'error' }, seconds);
  }

  setLeader(leading: boolean): void {
    this.#leader.set(leading ? 1 : 0);
  }

  setReady(ready: boolean): void {
    this.#ready.set(ready ? 1 : 0);
  }

  /** The exposition text and its content type. */
  async render(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  #precreate(targets: readonly MetricTarget[]): void {
    for (const t of targets) {
      const labels = { executor: t.executor, profile: t.profile };
      for (const stage of KNOWN_STAGES[t.type]) for (const outcome of OUTCOMES) this.#stage.zero({ ...labels, stage, outcome });
      for (const counter of this.#byReason.values()) counter.inc(labels, 0);
    }
    for (const reason of KNOWN_DIAGNOSTICS) {
      this.#reasons.add(reason);
      this.#diagnostics.inc({ reason }, 0);
    }
    this.setSessionCounts(new Map());
    this.#ready.set(0);
  }
}
