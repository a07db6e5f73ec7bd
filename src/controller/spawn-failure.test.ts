import { describe, expect, it } from 'vitest';
import { AgentctlHttpError } from '../agentctl-client/index.js';
import { spawnFailure } from './spawn-failure.js';

const req = { method: 'POST', path: '/api/v1/processes' };
const failed = (errno: string | undefined) =>
  new AgentctlHttpError(req, { status: 400, code: 'spawn_failed', serverMessage: `cannot start x: ${errno ?? 'spawn error'}`, mayHaveBeenApplied: false, ...(errno ? { errno } : {}) });

describe('spawnFailure', () => {
  it.each([
    ['ENOENT', 127, 'command not found'],
    ['EACCES', 126, 'permission denied'],
    ['ENOEXEC', 126, 'exec format error'],
    ['EWEIRD', 126, 'cannot execute (EWEIRD)'],
  ])('maps %s to exit %s (%s), as a shell does', (errno, exitCode, reason) => {
    expect(spawnFailure(failed(errno))).toEqual({ errno, exitCode, reason });
  });

  it('takes the errno from its field, not from the message', () => {
    const err = new AgentctlHttpError(req, { status: 400, code: 'spawn_failed', serverMessage: 'cannot start x: ENOENT', mayHaveBeenApplied: false, errno: 'EACCES' });
    expect(spawnFailure(err)?.errno).toBe('EACCES');
    expect(spawnFailure(failed(undefined))).toMatchObject({ errno: 'UNKNOWN', exitCode: 126 });
  });

  it('is undefined for every other error, a bad_request that mentions "cannot start" included', () => {
    expect(spawnFailure(new AgentctlHttpError(req, { status: 400, code: 'bad_request', serverMessage: 'cannot start x: ENOENT', mayHaveBeenApplied: false }))).toBeUndefined();
    expect(spawnFailure(new Error('cannot start x: ENOENT'))).toBeUndefined();
  });
});
