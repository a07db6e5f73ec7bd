import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseProcStat, procStartTime, procState, readProcStat } from './proc.js';

// Field 2 of a real line, with the 52 fields Linux 6.x writes; start time (field 22) is 8123456.
const line = (comm: string, state = 'S') =>
  `4242 (${comm}) ${state} 1 4242 4242 0 -1 4194560 120 0 0 0 1 2 0 0 20 0 1 0 8123456 2363392 180 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n`;

describe('parseProcStat', () => {
  it('reads state and start time', () => {
    expect(parseProcStat(line('node'))).toEqual({ state: 'S', startTime: '8123456' });
    expect(parseProcStat(line('sh', 'Z'))?.state).toBe('Z');
  });

  it('splits after the last ) so a command name with spaces and parentheses cannot shift the fields', () => {
    expect(parseProcStat(line('a) R 1 2 (b'))).toEqual({ state: 'S', startTime: '8123456' });
    expect(parseProcStat(line('my agent (v2)'))).toEqual({ state: 'S', startTime: '8123456' });
  });

  it.each([
    ['empty text', ''],
    ['no command name', '4242 S 1 2 3'],
    ['a truncated line', '4242 (node) S 1 4242'],
    ['a non-numeric start time', line('node').replace('8123456', 'x')],
  ])('returns null for %s', (_name, text) => {
    expect(parseProcStat(text)).toBeNull();
  });
});

describe('/proc readers', () => {
  it('read this process, a child while it exists, and nothing once the child is reaped', async () => {
    // a live process: running, sleeping, or (a child still exec'ing under disk load) in uninterruptible sleep
    expect(readProcStat(process.pid)?.state).toMatch(/^[RSD]$/);
    const child = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = child.pid ?? 0;
    expect(procState(pid)).toMatch(/^[RSD]$/);
    const start = procStartTime(pid);
    expect(Number(start)).toBeGreaterThanOrEqual(Number(procStartTime(process.pid)));
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited; // Node has reaped it: its /proc entry is gone
    expect(procState(pid)).toBeNull();
    expect(procStartTime(pid)).toBeNull();
  });
});
