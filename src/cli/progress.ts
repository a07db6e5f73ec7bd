/**
 * Renders launch/resume progress from session events, one line per change: a finished stage
 * with its duration, a waiting stage with its reason (once per reason), a failed stage with
 * its message. Works the same on a terminal and in a log file.
 * @module
 */
import type { SessionEvent, SessionView, StageRecord } from '../controller/service.js';
import { formatDuration, stageDetail } from './output.js';

export type LaunchOutcome = { kind: 'ready' } | { kind: 'failed'; stage: string | null; message: string; state: string };

export class LaunchProgress {
  readonly #seen = new Map<string, string>();
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
        this.out(`  ! ${e.reason}: ${e.message}`);
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
    const detail = stageDetail(s);
    const key = `${s.status}|${s.status === 'waiting' ? detail : ''}`;
    if (this.#seen.get(s.name) === key) return;
    this.#seen.set(s.name, key);
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
      case 'waiting':
        this.out(`  … ${name}  waiting${detail ? `: ${detail}` : ''}`);
        return;
      case 'succeeded':
        this.out(`  ✓ ${name}  ${dur}`);
        return;
      case 'failed':
        this.out(`  ✗ ${name}  ${dur}${detail ? `  ${detail}` : ''}`);
        return;
    }
  }
}
