import { ApiException, FetchError } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { KubeApiError, isAlreadyExists, isConflict, isForbidden, isGone, isNotFound, statusFromBody, toKubeApiError } from './errors.js';

const status = (code: number, reason: string, message: string): string =>
  JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message, details: { name: 'x', kind: 'pods' } });

describe('toKubeApiError', () => {
  it.each([
    [404, 'NotFound', 'pods "x" not found', isNotFound],
    [409, 'AlreadyExists', 'pods "x" already exists', isAlreadyExists],
    [409, 'Conflict', 'Precondition failed: UID in precondition: a, UID in object meta: b', isConflict],
    [403, 'Forbidden', 'pods "x" is forbidden: User "u" cannot get resource "pods"', isForbidden],
    [410, 'Expired', 'too old resource version: 1 (2)', isGone],
  ])('maps an ApiException %i %s (body as JSON text) to its status, reason and message', (code, reason, message, predicate) => {
    const err = toKubeApiError(new ApiException(code, 'ignored', status(code, reason, message), { authorization: 'Bearer secret' }), 'get pod ns/x');
    expect(err).toBeInstanceOf(KubeApiError);
    expect(err).toMatchObject({ name: 'KubeApiError', status: code, reason, message: `get pod ns/x: ${message}` });
    expect(err.details?.name).toBe('x');
    expect(err.cause).toBeInstanceOf(ApiException);
    expect(predicate(err)).toBe(true);
  });

  it('does not count AlreadyExists as a Conflict', () => {
    const err = toKubeApiError(new ApiException(409, '', status(409, 'AlreadyExists', 'exists'), {}), 'create pod ns/x');
    expect(isConflict(err)).toBe(false);
  });

  it('explains a 401 (client-node gives no body)', () => {
    const err = toKubeApiError(new ApiException(401, 'Unauthorized', undefined, {}), 'get pod ns/x');
    expect(err).toMatchObject({ status: 401, reason: 'Unauthorized' });
    expect(err.message).toContain('check the credentials');
  });

  it('never uses ApiException.message, which embeds the response headers', () => {
    const err = toKubeApiError(new ApiException(500, 'Headers: {"set-cookie":"s=abc"}', 'not json', {}), 'list pods');
    expect(err).toMatchObject({ status: 500, reason: 'InternalError', message: 'list pods: HTTP 500' });
  });

  it('classifies network errors, request timeouts and aborts', () => {
    const network = toKubeApiError(new FetchError('request to https://10.0.0.1/api failed, reason: connect ECONNREFUSED', 'system', { code: 'ECONNREFUSED' } as never), 'get pod ns/x');
    expect(network).toMatchObject({ reason: 'NetworkError', networkCode: 'ECONNREFUSED', status: undefined });

    const abort = Object.assign(new Error('The operation was aborted.'), { name: 'AbortError', type: 'aborted' });
    const timeout = AbortSignal.abort(new DOMException('timed out', 'TimeoutError'));
    expect(toKubeApiError(abort, 'get pod ns/x', { timeoutSignal: timeout }).reason).toBe('ClientTimeout');
    expect(toKubeApiError(abort, 'get pod ns/x', { timeoutSignal: new AbortController().signal }).reason).toBe('Aborted');
  });

  it('maps a watch failure (plain Error with statusCode)', () => {
    const err = toKubeApiError(Object.assign(new Error('Forbidden'), { statusCode: 403 }), 'watch pod ns/x');
    expect(err).toMatchObject({ status: 403, reason: 'Forbidden' });
  });

  it('sanitizes the message and keeps the original as the cause', () => {
    const original = new Error('exec plugin said: token=abcdef0123 Bearer eyJhbGciOiJSUzI1NiIsImtpZCI6IjEyMyJ9');
    const err = toKubeApiError(original, 'get pod ns/x');
    expect(err.message).not.toContain('abcdef0123');
    expect(err.message).not.toContain('eyJhbGci');
    expect(err.cause).toBe(original);
  });

  it('passes a KubeApiError through and finds one in a cause chain', () => {
    const inner = toKubeApiError(new ApiException(404, '', status(404, 'NotFound', 'gone'), {}), 'get pod ns/x');
    expect(toKubeApiError(inner, 'other')).toBe(inner);
    expect(isNotFound(new Error('wrapped', { cause: inner }))).toBe(true);
  });
});

describe('statusFromBody', () => {
  it('parses JSON text and objects, and ignores anything else', () => {
    expect(statusFromBody(status(404, 'NotFound', 'm'))?.reason).toBe('NotFound');
    expect(statusFromBody({ kind: 'Status', message: 'm' })?.message).toBe('m');
    expect(statusFromBody('<html>502</html>')).toBeUndefined();
    expect(statusFromBody('')).toBeUndefined();
    expect(statusFromBody(undefined)).toBeUndefined();
  });
});
