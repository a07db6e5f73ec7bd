import { describe, expect, it } from 'vitest';
import { HTTP_ERROR_STATUS, HttpError, httpErrorFactory, isHttpError } from './errors.js';

describe('HttpError', () => {
  it('takes the usual status of a shared code, or the one it is given', () => {
    expect(new HttpError('body_too_large', 'big')).toMatchObject({ name: 'HttpError', code: 'body_too_large', status: 413, message: 'big' });
    expect(new HttpError('git_error', 'no', { status: 422, errno: 'E', field: 'f' })).toMatchObject({ status: 422, errno: 'E', field: 'f' });
    for (const [code, status] of Object.entries(HTTP_ERROR_STATUS)) expect(new HttpError(code as keyof typeof HTTP_ERROR_STATUS, 'x').status).toBe(status);
  });

  it('builds the errors of one vocabulary with that vocabulary’s status', () => {
    const fail = httpErrorFactory<'bad_request' | 'too_many'>({ bad_request: 400, too_many: 429 });
    const cause = new Error('root');
    expect(fail('too_many', 'slow down', { cause })).toMatchObject({ code: 'too_many', status: 429, cause });
  });

  it('is recognized by name (a copy of the module makes another class), optionally within a vocabulary', () => {
    const copy = Object.assign(new Error('x'), { name: 'HttpError', code: 'conflict', status: 409 });
    expect(isHttpError(copy)).toBe(true);
    expect(isHttpError(copy, ['conflict'])).toBe(true);
    expect(isHttpError(copy, ['not_found'])).toBe(false);
    expect(isHttpError(new Error('x'))).toBe(false);
    expect(isHttpError({ name: 'HttpError', code: 'conflict', status: 409 })).toBe(false);
  });
});
