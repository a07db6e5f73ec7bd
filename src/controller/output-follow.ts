/**
 * The live output mirror: while a session of an executor that cannot read a stopped session's
 * output (Kubernetes) is connected, its agent run's output is followed and written to the
 * inventory as it streams, so a Pod that dies without a stop (deleted, evicted, its node lost) or
 * a stop whose copy fails still leaves the output of up to a few seconds before in the store.
 *
 * How: one follower per live entry polls agentctl (`readOutput` from the last sequence read, every
 * {@link POLL_MS}, over the instance client's keep-alive HTTP) rather than holding a WebSocket per
 * session: a quiet session costs one small request per poll, no socket or stream state per
 * session, and a poll that fails is simply made again. Reading output is no activity to agentctl
 * (activity/assess.ts), so the follower never keeps a quiet session from its idle suspension.
 * Writes are coalesced: at most one per session per {@link FLUSH_MS}, only when there is new
 * output, each the run's bounded tail (the last MiB, held in memory: RunTail), replacing its row;
 * a new run (a new agent process id) starts a new record and the run before keeps its own. A
 * failure is logged once per kind and retried at the next poll. The follower ends with its live
 * entry (its abort): a stop waits for its last write, then copies once more (output-mirror.ts).
 * @module
 */
import type { Inventory } from '../inventory/index.js';
import { DEFAULT_RECORDED_OUTPUT_BYTES } from '../inventory/index.js';
import { LIMITS } from '../protocol/index.js';
import { errorMessage } from '../shared/errors.js';
import type { Logger } from '../shared/logger.js';
import { sanitize } from '../shared/sanitize.js';
import type { ManagerContext } from './context.js';
import type { LiveSession, LiveSessions } from './live.js';
import { outputTail, RunTail, type OutputReader } from './output-follow-tail.js';

/** How often a follower asks agentctl for new output. */
const POLL_MS = 2_000;
/** The least time between two writes of one session's output. */
const FLUSH_MS = 5_000;

interface FollowerDeps {
  sessionId: string;
  client: OutputReader;
  store: Pick<Inventory, 'putRecordedOutput'>;
  log: Logger;
  /** The agent run to follow now (a live entry's `agentProcessId`: it changes on a restart). */
  processId: () => string | null;
  /** Ends the follower: no read, write or timer after it (an in-flight step finishes first). */
  signal: AbortSignal;
  /** Whether to follow at all (checked once, at the first poll); default yes. */
  wanted?: () => Promise<boolean>;
  /** Settles when the follower before this one (of the same session) is done: its last write lands first. */
  after?: Promise<void>;
}

interface FollowerTiming {
  pollMs?: number;
  flushMs?: number;
  maxBytes?: number;
  now?: () => number;
}

/** The run being followed. */
interface Run {
  id: string;
  tail: RunTail;
  /** The sequence number to read from; null before the first read (then the tail is read backwards). */
  next: number | null;
  /** Output held that is not written yet. */
  dirty: boolean;
  /** The process exited and all its output was read: nothing more to read. */
  done: boolean;
}

export class OutputFollower {
  readonly #deps: FollowerDeps;
  readonly #pollMs: number;
  readonly #flushMs: number;
  readonly #maxBytes: number;
  readonly #now: () => number;
  #run: Run | null = null;
  #lastWrite = Number.NEGATIVE_INFINITY;
  #timer: NodeJS.Timeout | null = null;
  #stepping = false;
  #wanted: boolean | null = null;
  /** Kinds of failure already logged (`read:Error`, `write:…`): each is logged once until that operation succeeds. */
  readonly #logged = new Set<string>();
  readonly #settled: Promise<void>;
  #resolveSettled: () => void = () => undefined;

  constructor(deps: FollowerDeps, timing: FollowerTiming = {}) {
    this.#deps = deps;
    this.#pollMs = timing.pollMs ?? POLL_MS;
    this.#flushMs = timing.flushMs ?? FLUSH_MS;
    this.#maxBytes = timing.maxBytes ?? DEFAULT_RECORDED_OUTPUT_BYTES;
    this.#now = timing.now ?? Date.now;
    this.#settled = new Promise<void>((resolve) => (this.#resolveSettled = resolve));
  }

  /** Starts polling (the first poll one interval from now); it ends when the signal aborts. */
  start(): this {
    const { signal } = this.#deps;
    signal.addEventListener('abort', () => this.#end(), { once: true });
    if (signal.aborted) this.#end();
    else this.#schedule();
    return this;
  }

  /** Resolves once the follower has ended and its last step (a write in flight) is done. */
  settled(): Promise<void> {
    return this.#settled;
  }

  /** One poll: read what is new of the current run, write it when due. Never throws. */
  async step(): Promise<void> {
    if (this.#deps.signal.aborted) return;
    this.#wanted ??= this.#deps.wanted ? await this.#deps.wanted().catch(() => true) : true;
    if (!this.#wanted) return;
    const id = this.#deps.processId();
    if (id !== this.#run?.id) {
      // the run before gets its last output written first, so the new run is the latest record
      if (this.#run?.dirty && !(await this.#flush(this.#run))) return;
      this.#run = id === null ? null : { id, tail: new RunTail(this.#maxBytes), next: null, dirty: false, done: false };
    }
    const run = this.#run;
    if (run === null) return;
    if (!run.done && !(await this.#read(run))) return;
    if (run.dirty && (run.done || this.#now() - this.#lastWrite >= this.#flushMs)) await this.#flush(run);
  }

  async #read(run: Run): Promise<boolean> {
    const { client, signal } = this.#deps;
    try {
      if (run.next === null) {
        const tail = await outputTail(client, run.id, this.#maxBytes, signal);
        run.dirty = run.tail.append(tail.chunks) || run.dirty;
        run.next = tail.next;
      }
      for (;;) {
        const from: number = run.next;
        const page = await client.readOutput(run.id, { from, limit: LIMITS.maxOutputPage, signal });
        run.dirty = run.tail.append(page.chunks) || run.dirty;
        run.next = Math.max(from, page.next);
        if (page.complete) run.done = true;
        if (page.complete || page.chunks.length < LIMITS.maxOutputPage || page.next <= from) break; // a full page: more may follow
      }
      this.#succeeded('read');
      return true;
    } catch (err) {
      this.#failed('read', run.id, err, 'cannot read the agent output to mirror it; trying again');
      return false;
    }
  }

  /** Writes the run's tail (once the follower before has settled); true when written. */
  async #flush(run: Run): Promise<boolean> {
    const { store, sessionId, signal } = this.#deps;
    await this.#deps.after;
    if (signal.aborted) return false; // the stop copies the output itself
    try {
      await store.putRecordedOutput(sessionId, run.id, run.tail.chunks(), { maxBytes: this.#maxBytes });
      run.dirty = false;
      this.#lastWrite = this.#now();
      this.#succeeded('write');
      return true;
    } catch (err) {
      this.#failed('write', run.id, err, 'cannot write the mirrored agent output to the store; trying again');
      return false;
    }
  }

  #succeeded(op: 'read' | 'write'): void {
    for (const kind of this.#logged) if (kind.startsWith(`${op}:`)) this.#logged.delete(kind);
  }

  #failed(op: 'read' | 'write', processId: string, err: unknown, message: string): void {
    if (this.#deps.signal.aborted) return; // ended under it: no failure of the follower
    const kind = `${op}:${err instanceof Error ? err.name : typeof err}`;
    if (this.#logged.has(kind)) return;
    this.#logged.add(kind);
    // an agentctl or store error names neither a token nor a connection string; sanitized anyway
    this.#deps.log.warn({ session: this.#deps.sessionId, process: processId, err: sanitize(errorMessage(err)) }, message);
  }

  #schedule(): void {
    if (this.#deps.signal.aborted) return;
    this.#timer = setTimeout(() => {
      this.#timer = null;
      this.#stepping = true;
      void this.step()
        .catch(() => undefined)
        .finally(() => {
          this.#stepping = false;
          if (this.#deps.signal.aborted) this.#resolveSettled();
          else if (this.#wanted !== false) this.#schedule();
          else this.#resolveSettled();
        });
    }, this.#pollMs);
    this.#timer.unref();
  }

  #end(): void {
    if (this.#timer !== null) clearTimeout(this.#timer);
    this.#timer = null;
    if (!this.#stepping) this.#resolveSettled();
  }
}

/** The followers of each live map, by session: the latest of each session. */
const followers = new WeakMap<LiveSessions, Map<string, OutputFollower>>();

function followersOf(live: LiveSessions): Map<string, OutputFollower> {
  let map = followers.get(live);
  if (!map) followers.set(live, (map = new Map()));
  return map;
}

/**
 * Starts following the output of live entry `entry` of session `sessionId` (LiveSessions.onOpen),
 * when its executor cannot read a stopped session's output (no `readRecordedOutput`); it ends
 * with the entry. Never throws.
 */
export function followLiveOutput(ctx: ManagerContext, sessionId: string, entry: LiveSession, timing?: FollowerTiming): void {
  const map = followersOf(ctx.live);
  const previous = map.get(sessionId);
  const follower = new OutputFollower(
    {
      sessionId,
      client: entry.instance.client,
      store: ctx.store,
      log: ctx.log,
      processId: () => entry.agentProcessId,
      signal: entry.abort.signal,
      wanted: async () => {
        const row = await ctx.store.getRuntime(sessionId);
        const executor = row ? ctx.executors.get(row.executor) : undefined;
        return executor !== undefined && executor.readRecordedOutput === undefined;
      },
      ...(previous ? { after: previous.settled() } : {}),
    },
    timing,
  );
  map.set(sessionId, follower);
  void follower.settled().then(() => {
    if (map.get(sessionId) === follower) map.delete(sessionId);
  });
  follower.start();
}

/** How long a close waits for the followers' last writes at most. */
const SETTLE_BUDGET_MS = 5_000;

/**
 * Settles when the output followers of `live` (of one session, or all) have ended and written
 * their last, or after a few seconds at most (a write that hangs never holds up a stop or a close).
 */
export async function followersSettled(live: LiveSessions, sessionId?: string): Promise<void> {
  const map = followers.get(live);
  if (!map) return;
  const ended = sessionId === undefined ? [...map.values()] : [map.get(sessionId)].filter((f) => f !== undefined);
  if (ended.length === 0) return;
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<void>((resolve) => (timer = setTimeout(resolve, SETTLE_BUDGET_MS)));
  await Promise.race([Promise.all(ended.map((f) => f.settled())), budget]);
  clearTimeout(timer);
}
