import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { OWNER_ENV } from '../../../src/executors/local/index.js';
import { findProcessesByEnv, isOurProcess, procStartTime, waitForExit } from '../../../src/executors/local/proc.js';

describe('process ownership checks (/proc)', () => {
  it('recognizes only the process it started: marker, start time, liveness', async () => {
    const marker = `/tmp/berth-proc-test#${process.pid}-${Date.now()}`;
    const child = spawn('sleep', ['30'], { env: { ...process.env, [OWNER_ENV]: marker }, stdio: 'ignore' });
    const pid = child.pid!;
    try {
      const start = procStartTime(pid);
      expect(start).toMatch(/^\d+$/);
      expect(isOurProcess(pid, { env: OWNER_ENV, value: marker, procStart: start })).toBe(true);
      expect(isOurProcess(pid, { env: OWNER_ENV, value: `${marker}-other`, procStart: start }), 'another owner').toBe(false);
      expect(isOurProcess(pid, { env: OWNER_ENV, value: marker, procStart: '1' }), 'a reused pid has another start time').toBe(false);
      expect(isOurProcess(process.pid, { env: OWNER_ENV, value: marker, procStart: null }), 'no marker').toBe(false);
      expect(findProcessesByEnv(OWNER_ENV, marker)).toEqual([pid]);
    } finally {
      child.kill('SIGKILL');
    }
    await new Promise((r) => child.once('exit', r));
    expect(await waitForExit(pid, 2000)).toBe(true);
    expect(isOurProcess(pid, { env: OWNER_ENV, value: marker, procStart: null }), 'a dead process is not ours').toBe(false);
    expect(findProcessesByEnv(OWNER_ENV, marker)).toEqual([]);
  });
});
