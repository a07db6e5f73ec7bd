import { describe, expect, it } from 'vitest';
import { LaunchValidationError, SessionNotFoundError, SessionStateError } from '../controller/index.js';
import { AgentctlHttpError } from '../agentctl-client/index.js';
import { STATUS_OF } from '../api/index.js';
import { HttpError } from '../shared/http/index.js';
import { toErrorResponse } from './error-response.js';

describe('toErrorResponse', () => {
  it.each([
    ['SessionNotFoundError', new SessionNotFoundError('s1'), 404, 'not_found'],
    ['SessionStateError', new SessionStateError('s1', 'stopped', 'exec in', 'resume it'), 409, 'conflict'],
    ['LaunchValidationError', new LaunchValidationError('repository.url', 'must be a clone URL'), 400, 'bad_request'],
    ['HttpError', new HttpError('unauthorized', 'no token'), 401, 'unauthorized'],
    ['an unexpected error', new Error('boom'), 500, 'internal'],
    ['a thrown string', 'boom', 500, 'internal'],
  ])('maps %s to %i %s', (_name, err, status, code) => {
    const r = toErrorResponse(err);
    expect(r.status).toBe(status);
    expect(r.body.error.code).toBe(code);
  });

  it.each([
    [400, 'bad_request'],
    [404, 'not_found'],
    [409, 'conflict'],
    [500, 'internal'],
  ] as const)('answers an agentctl %i with %s and agentctl’s own message, without the internal request line', (status, code) => {
    const err = new AgentctlHttpError({ method: 'POST', path: '/api/v1/processes' }, { status, code: undefined, serverMessage: 'cwd: no such directory', mayHaveBeenApplied: false });
    expect(toErrorResponse(err)).toEqual({ status: status === 500 ? 500 : status, body: { error: { code, message: 'cwd: no such directory' } } });
  });

  it('names the field of a launch validation error', () => {
    expect(toErrorResponse(new LaunchValidationError('repository.url', 'must be a clone URL')).body.error).toEqual({
      code: 'bad_request',
      message: 'repository.url: must be a clone URL',
      field: 'repository.url',
    });
  });

  it('sanitizes the message of an unexpected error', () => {
    const secret = 'ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    const { body } = toErrorResponse(new Error(`clone failed: Authorization: Bearer ${secret}`));
    expect(body.error.message).not.toContain(secret);
    expect(body.error.message).toContain('clone failed');
  });

  it('keeps the message of a state error verbatim (it is the contract)', () => {
    expect(toErrorResponse(new SessionStateError('s1', 'stopped', 'exec in', 'resume it first')).body.error.message).toBe(
      "cannot exec in session 's1' while it is stopped: resume it first",
    );
  });

  it('sends every API error code with the status the wire gives it (kit errors included)', () => {
    for (const [code, status] of Object.entries(STATUS_OF)) {
      expect(toErrorResponse(new HttpError(code as keyof typeof STATUS_OF, 'x')).status, code).toBe(status);
    }
  });
});
