import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { isLaunchError } from '../../launch-kit/index.js';
import { BUDGET_DEFAULTS } from '../config/index.js';
import { BootstrapProgress } from './bootstrap-progress.js';

const PATH = 'profiles.k8s.kubernetes.timeouts';

function progress(budgets: Partial<typeof BUDGET_DEFAULTS> = {}) {
  const reports: [string, string][] = [];
  const p = new BootstrapProgress({ budgets: { ...BUDGET_DEFAULTS, ...budgets }, timeoutsPath: PATH, report: (r, m) => reports.push([r, m]), refreshMs: 10_000 });
  return { p, reports };
}

const line = (text: string): Buffer => Buffer.from(`${text}\n`);

describe('BootstrapProgress', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('reports each step as it starts, from the exec lines, and refreshes it with the time so far', () => {
    const { p, reports } = progress();
    p.start();
    expect(reports.at(-1)).toEqual(['Uploading', 'uploading agentctl and the bootstrap files (0 s so far)']);
    vi.advanceTimersByTime(3000);
    // split across chunks, as a socket may deliver it
    p.onStdout(Buffer.from('berth: start marker wri'));
    p.onStdout(Buffer.from('tten\nberth: step clo'));
    expect(reports.at(-1)?.[0]).toBe('Preparing');
    p.onStdout(Buffer.from('ne\n'));
    expect(reports.at(-1)).toEqual(['Cloning', 'cloning the repository (0 s so far)']);
    vi.advanceTimersByTime(4000);
    p.onStdout(line('berth: step setup_script'));
    expect(reports.at(-1)).toEqual(['RunningSetupScript', 'running setup_script (0 s so far)']);
    vi.advanceTimersByTime(25_000);
    expect(reports.at(-1)).toEqual(['RunningSetupScript', 'running setup_script (23 s so far)']);
    p.stop();
    const count = reports.length;
    vi.advanceTimersByTime(60_000);
    expect(reports.length, 'no report after stop').toBe(count);
  });

  it('fails naming setup_script and its field when it outlives its budget, and aborts the execs', async () => {
    const { p } = progress({ setupScriptSeconds: 5 });
    p.start();
    p.onStdout(line('berth: start marker written'));
    p.onStdout(line('berth: step setup_script'));
    vi.advanceTimersByTime(4999);
    expect(p.signal.aborted).toBe(false);
    vi.advanceTimersByTime(1);
    const err = await p.expired.catch((e: unknown) => e);
    expect(isLaunchError(err)).toBe(true);
    expect(err).toMatchObject({ stage: 'bootstrap', reason: 'TimedOut', message: `setup_script did not finish within 5 s (${PATH}.setup_script_seconds)` });
    expect(p.signal.aborted).toBe(true);
  });

  it.each([
    ['the upload', [], { uploadSeconds: 7 }, 7, 'the upload did not finish within 7 s', 'upload_seconds'],
    ['the clone', ['berth: start marker written', 'berth: step clone'], { cloneSeconds: 9 }, 9, 'the clone did not finish within 9 s', 'clone_seconds'],
  ])('times %s with its own budget', async (_what, lines, budgets, seconds, text, key) => {
    const { p } = progress(budgets);
    for (const l of lines) p.onStdout(line(l));
    p.start();
    vi.advanceTimersByTime(seconds * 1000);
    await expect(p.expired).rejects.toThrow(`${text} (${PATH}.${key})`);
  });

  it('gives each step a fresh budget: a slow upload does not eat into the setup script', async () => {
    const { p } = progress({ uploadSeconds: 10, setupScriptSeconds: 10 });
    p.start();
    vi.advanceTimersByTime(9000);
    p.onStdout(line('berth: start marker written'));
    p.onStdout(line('berth: step setup_script'));
    vi.advanceTimersByTime(9000);
    expect(p.signal.aborted).toBe(false);
    p.stop();
    vi.advanceTimersByTime(60_000);
    expect(p.signal.aborted, 'a stopped progress never expires').toBe(false);
  });
});
