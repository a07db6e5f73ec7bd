/**
 * Renders launch/resume progress from session events, one line per change: a finished stage
 * with its duration, a waiting stage with its reason (once per reason), a failed stage with
 * its message. Works the same on a terminal and in a log file.
 * @module
 */
import type { SessionEvent, SessionView, StageRecord } from '../api/index.js';
import { formatDuration, stageDetail } from './output.js';

export type LaunchOutcome = { kind: 'ready' } | { kind: 'failed'; stage: string | null; message: string; state: string };

/** Diagnostics that inform (a warm or cold launch of a pooled profile) rather than warn. */
const INFO_DIAGNOSTICS = new Set(['WarmLaunch', 'ColdLaunch']);
/** The instant stage that records the same on the session (for status and the dashboard): the diagnostic line says it here. */
const SILENT_STAGES = new Set(['pool']);

export class LaunchProgress {
  /**
   * What was printed, keyed by the stage record itself (name, start time, status, waiting reason),
   * not by arrival order: the events stream replays what happened while its snapshot was read,
   * so older records of a stage may arrive after newer ones and must not print it again.
   */
  readonly #printed = new Set<string>();
  /** Stage runs (name + start time) that have ended: any later-arriving record of them is stale. */
  readonly #ended = new Set<string>();
  #width = 16;
  /** The stage in progress (running or waiting), for a live status line on terminals. */
  current: { name: string; startedAt: number; detail: string } | null = null;

  constructor(private readonly out: (line: string) => void) {}

  /** Feeds one event; returns the outcome once the launch is over. */
  onEvent(e: SessionEvent): LaunchOutcome | undefined {
    switch (e.type) {
      case 'stage':
        this.#stage(e.stage);
        return undefined;
      case 'diagnostic':
        // which way a pooled launch went is news, not a warning
        this.out(INFO_DIAGNOSTICS.has(e.reason) ? `  · ${e.message}` : `  ! ${e.reason}: ${e.message}`);
        return undefined;
      case 'state':
        if (e.state === 'ready') return { kind: 'ready' };
        if (e.state === 'launching') return undefined;
        return { kind: 'failed', stage: e.error?.stage ?? null, message: e.error?.message ?? `the session became ${e.state}`, state: e.state };
    }
  }

  /** The outcome from a final view (when the stream missed the end). */
  static outcomeOf(view: SessionView): LaunchOutcome | undefined {
    if (view.state === 'ready') return { kind: 'ready' };
    if (view.state === 'launching') return undefined;
    return { kind: 'failed', stage: view.error?.stage ?? null, message: view.error?.message ?? `the session is ${view.state}`, state: view.state };
  }

  #stage(s: StageRecord): void {
    const run = `${s.name}|${s.startedAt}`;
    if (this.#ended.has(run) || SILENT_STAGES.has(s.name)) return;
    const detail = stageDetail(s);
    const key = `${run}|${s.status}|${s.status === 'waiting' ? detail : ''}`;
    if (this.#printed.has(key)) return;
    this.#printed.add(key);
    if (s.status === 'succeeded' || s.status === 'failed') this.#ended.add(run);
    this.#width = Math.max(this.#width, s.name.length);
    const name = s.name.padEnd(this.#width);
    const dur = s.durationMs !== null ? formatDuration(s.durationMs) : '';
    this.current =
      s.status === 'running' || s.status === 'waiting'
        ? { name: s.name, startedAt: Date.parse(s.startedAt), detail: s.status === 'waiting' ? `waiting${detail ? `: ${detail}` : ''}` : 'running' }
        : this.current?.name === s.name
          ? null
          : this.current;
    switch (s.status) {
      case 'running':
        return;
      case 'waiting': {
        // when, within the stage, the cluster said so (the latest wait's own time)
        const at = Date.parse(s.waits?.[s.waits.length - 1]?.at ?? '');
        const offset = Number.isNaN(at) ? '' : ` +${formatDuration(Math.max(0, at - Date.parse(s.startedAt)))}`;
        this.out(`  … ${name}${offset}  waiting${detail ? `: ${detail}` : ''}`);
        return;
      }
      case 'succeeded':
        this.out(`  ✓ ${name}  ${dur}`);
        return;
      case 'failed':
        this.out(`  ✗ ${name}  ${dur}${detail ? `  ${detail}` : ''}`);
        return;
    }
  }
}
