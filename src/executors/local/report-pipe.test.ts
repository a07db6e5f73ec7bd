import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readPortReport, waitForPortReport } from './report-pipe.js';

const never = new Promise<string>(() => undefined);

describe('readPortReport', () => {
  it('takes the first line, even split across chunks, and closes the pipe', async () => {
    const pipe = new PassThrough();
    const report = readPortReport(pipe);
    pipe.write('{"control_');
    pipe.write('port":40123}\n{"control_port":1}\n');
    await expect(report).resolves.toEqual({ controlPort: 40123 });
    expect(pipe.destroyed).toBe(true);
  });

  it('rejects a malformed line', async () => {
    const pipe = new PassThrough();
    const report = readPortReport(pipe);
    pipe.write('{"control_port":"8765"}\n');
    await expect(report).rejects.toThrow(/integer between 1 and 65535/);
  });

  it('stops reading a line that never ends', async () => {
    const pipe = new PassThrough();
    const report = readPortReport(pipe);
    pipe.write('x'.repeat(1000));
    await expect(report).rejects.toThrow(/longer than 256 bytes/);
    expect(pipe.destroyed).toBe(true);
  });

  it('resolves null when the pipe ends without a whole line', async () => {
    const pipe = new PassThrough();
    const report = readPortReport(pipe);
    pipe.end('{"control_port":401');
    await expect(report).resolves.toBeNull();
  });
});

describe('waitForPortReport', () => {
  it('returns the report', async () => {
    await expect(waitForPortReport(Promise.resolve({ controlPort: 4242 }), never, { timeoutMs: 60_000 })).resolves.toEqual({ controlPort: 4242 });
  });

  it('says how agentctl ended when it exits first', async () => {
    await expect(waitForPortReport(new Promise(() => undefined), Promise.resolve('exit code 2'), { timeoutMs: 60_000 })).rejects.toThrow(
      'agentctl exited before it answered (exit code 2)',
    );
  });

  it('says how agentctl ended when the pipe closed without a report', async () => {
    await expect(waitForPortReport(Promise.resolve(null), Promise.resolve('signal SIGKILL'), { timeoutMs: 60_000 })).rejects.toThrow(
      'agentctl exited before it answered (signal SIGKILL)',
    );
  });

  it('gives up after the deadline', async () => {
    await expect(waitForPortReport(new Promise(() => undefined), never, { timeoutMs: 20 })).rejects.toThrow('agentctl did not report its port within 20 ms');
  });

  it('stops waiting when the launch is aborted', async () => {
    const ctl = new AbortController();
    const waiting = waitForPortReport(new Promise(() => undefined), never, { timeoutMs: 60_000, signal: ctl.signal });
    ctl.abort(new Error('launch cancelled'));
    await expect(waiting).rejects.toThrow('launch cancelled');
  });
});
