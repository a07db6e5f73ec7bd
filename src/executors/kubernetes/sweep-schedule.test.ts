import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { silentLogger } from '../../shared/logger.js';
import type { SweepReport } from './sweep.js';
import { SweepSchedule } from './sweep-schedule.js';

const report = (nextInMs: number | null = null): SweepReport => ({ deleted: [], foreign: [], waiting: nextInMs === null ? 0 : 1, nextInMs, errors: [] });

describe('SweepSchedule', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('sweeps at start and then every interval, never two at once', async () => {
    let running = 0;
    let most = 0;
    let runs = 0;
    let release: () => void = () => undefined;
    const schedule = new SweepSchedule(async () => {
      runs++;
      most = Math.max(most, ++running);
      await new Promise<void>((r) => (release = r));
      running--;
      return report();
    }, silentLogger, 1_000);
    schedule.start();
    expect(runs).toBe(1);
    schedule.now();
    schedule.now();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs, 'asked three times while one runs: no second sweep yet').toBe(1);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(runs, 'one more afterwards for all the requests meanwhile').toBe(2);
    release();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(runs).toBe(3);
    release();
    expect(most).toBe(1);
    await schedule.stop();
    await vi.advanceTimersByTimeAsync(5_000);
    expect(runs, 'nothing after stop').toBe(3);
  });

  it('sweeps again once a waiting object is old enough, and when asked to after a delay', async () => {
    const at: number[] = [];
    const schedule = new SweepSchedule(() => {
      at.push(Date.now());
      return Promise.resolve(report(at.length === 1 ? 10_000 : null));
    }, silentLogger, 600_000);
    const t0 = Date.now();
    schedule.start();
    await vi.advanceTimersByTimeAsync(12_500);
    expect(at.map((t) => t - t0)).toEqual([0, 12_000]);
    schedule.after(60_000);
    await vi.advanceTimersByTimeAsync(62_000);
    expect(at.map((t) => t - t0)).toEqual([0, 12_000, 74_500]);
    await schedule.stop();
  });
});
