/**
 * `berth serve` as one replica of several sharing a Postgres inventory: only the holder of the
 * controller Lease runs the controller (launches, watches, replacements, sweeps); the others wait
 * as standbys, `/readyz` answering 503 `standby` so a Service sends nobody to them. A standby that
 * takes the Lease claims the store's fence with the Lease's generation before it recovers anything,
 * so a deposed leader that has not noticed yet can write nothing more. A leader whose term ends
 * (its renewals failed past the deadline, another holder seen) stops its controller and asks serve
 * to exit: restarted, it rejoins as a standby. On shutdown it stops the controller first, then
 * releases the Lease, so a standby takes over at once and never while this one still acts.
 * @module
 */
import type { ServerMetrics } from './metrics.js';
import type { Readiness } from './health.js';
import { LeaderElector } from './leader/elector.js';
import type { LeaderElectorOptions, LeaderTerm } from './leader/options.js';
import type { ApiLogger } from './server.js';
import type { MarkLeader } from './leader/pod-label.js';

/** What the elector needs besides its callbacks (the Lease port, identity, durations), and how the leader marks its Pod. */
export type LeaderSettings = Omit<LeaderElectorOptions, 'onStartedLeading' | 'onStoppedLeading' | 'onNewLeader' | 'onEvent' | 'logger'> & {
  /** Sets or removes the leader label on this replica's Pod (pod-label.ts); absent outside a Pod. */
  markLeader?: MarkLeader;
};

interface LeadOptions {
  settings: LeaderSettings;
  readiness: Readiness;
  metrics: ServerMetrics;
  logger?: ApiLogger;
  /** Starts the controller for a term (claiming the fence with its generation); resolves once it serves. */
  start: (term: LeaderTerm) => Promise<void>;
  /** Stops the controller (waits for a start still running). */
  stop: () => Promise<void>;
  /** The controller cannot go on in this process (its term ended, or it failed to start): serve should exit. */
  onFatal: (err: Error) => void;
  /** The first wait before the leader label is tried again. @default 1000 */
  labelRetryMs?: number;
}

export interface Leadership {
  /** Stops competing; when leading, stops the controller, then hands the Lease over. */
  release(): Promise<void>;
}

/** How long setting or removing the leader label may take. */
const MARK_TIMEOUT_MS = 5000;
/** The first wait before setting the leader label again, and the longest. */
const LABEL_RETRY_MS = 1000;
const LABEL_RETRY_MAX_MS = 15_000;

/** Resolves after `ms`, or at once when `signal` aborts. */
function delay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Enters the election (as a standby until the Lease is won). */
export function lead(opts: LeadOptions): Leadership {
  const { readiness, metrics, logger } = opts;
  const { markLeader, ...settings } = opts.settings;
  metrics.setLeader(false);
  let closing = false;
  let warned = false;
  /** True once the label is as asked (or there is no Pod to label). */
  const mark = async (leading: boolean): Promise<boolean> => {
    if (!markLeader) return true;
    let timer: NodeJS.Timeout | undefined;
    // bounded: an API server that cannot be reached (why a term may end) must not hold anything up
    const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer in ${MARK_TIMEOUT_MS / 1000} s`)), MARK_TIMEOUT_MS)));
    try {
      await Promise.race([markLeader(leading), timeout]);
      return true;
    } catch (err) {
      // the Service then selects no Pod (or a stale one until its readiness fails): say what to fix, once
      if (!warned) logger?.warn({ err: (err as Error).message }, `cannot ${leading ? 'set' : 'remove'} the leader label on this Pod (needs get and patch on pods in its namespace)`);
      warned = true;
      return false;
    } finally {
      clearTimeout(timer);
    }
  };
  /**
   * The leader's label, tried again (backing off to LABEL_RETRY_MAX_MS) until it is set or the term
   * ends: a leader whose one patch failed (an API server slow under load) would otherwise lead with
   * no Service sending it anybody until the next change of leader.
   */
  const markWhileLeading = async (signal: AbortSignal): Promise<void> => {
    for (let wait = opts.labelRetryMs ?? LABEL_RETRY_MS; !signal.aborted; wait = Math.min(2 * wait, LABEL_RETRY_MAX_MS)) {
      if (await mark(true)) {
        if (warned) logger?.info({ label: 'berth.dev/leader' }, 'the leader label is set on this Pod');
        return;
      }
      await delay(wait, signal);
    }
  };
  const elector = new LeaderElector({
    ...settings,
    ...(logger ? { logger: logger as NonNullable<LeaderElectorOptions['logger']> } : {}),
    onStartedLeading: async (term) => {
      metrics.setLeader(true);
      logger?.info({ identity: opts.settings.identity, generation: term.generation }, 'took the controller Lease: starting the controller');
      try {
        await opts.start(term);
        await markWhileLeading(term.signal);
      } catch (err) {
        if (closing) return;
        opts.onFatal(new Error(`the controller could not start as the new leader: ${(err as Error).message}`, { cause: err }));
      }
    },
    onStoppedLeading: async () => {
      metrics.setLeader(false);
      readiness.markNotReady('stopping', closing ? undefined : 'lost the controller Lease: stopping (this replica restarts as a standby)');
      // the controller stops at once; the label goes meanwhile (the API may be what failed)
      await Promise.all([opts.stop(), mark(false)]);
      if (!closing) opts.onFatal(new Error('lost the controller Lease (renewals failed, or another controller holds it): exiting so that this replica rejoins as a standby'));
    },
    onNewLeader: (identity) => logger?.info({ leader: identity }, identity === null ? 'the controller Lease is free' : 'controller leader'),
  });
  // a container restarted in a Pod that led still has the label: off before this one counts as a standby
  const entered = mark(false).then(() => {
    if (closing) return;
    readiness.markNotReady('standby');
    elector.start();
  });
  return {
    release: async () => {
      closing = true;
      await entered;
      const released = await elector.release();
      // not leading (a standby): nothing ran, but a start may have been on its way
      if (!released) await opts.stop();
    },
  };
}
