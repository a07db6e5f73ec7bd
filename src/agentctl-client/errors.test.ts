import { describe, expect, it } from 'vitest';
import {
  AgentctlHttpError,
  AgentctlTimeoutError,
  AgentctlUnreachableError,
  ProtocolError,
  isAgentctlError,
  isAgentctlHttpError,
  isProtocolError,
  mayHaveBeenApplied,
} from './errors.js';

const req = { method: 'POST', path: '/api/v1/instances' };

describe('client errors', () => {
  it('name the method and path and keep facts in fields', () => {
    const err = new AgentctlHttpError(req, { status: 409, code: 'conflict', serverMessage: 'exists', mayHaveBeenApplied: false });
    expect(err.message).toBe('agentctl POST /api/v1/instances: status 409 conflict: exists');
    expect(err).toMatchObject({ name: 'AgentctlHttpError', method: 'POST', path: '/api/v1/instances', status: 409 });
    expect(err).toBeInstanceOf(Error);
  });

  it('keep the cause', () => {
    const cause = new Error('socket hang up');
    expect(new AgentctlUnreachableError(req, 'x', { mayHaveBeenApplied: true, cause }).cause).toBe(cause);
  });

  it('are recognized by guards across module copies (by name)', () => {
    const foreign = Object.assign(new Error('x'), { name: 'AgentctlHttpError', status: 500 });
    expect(isAgentctlHttpError(foreign)).toBe(true);
    expect(isAgentctlError(foreign)).toBe(true);
    expect(isProtocolError(foreign)).toBe(false);
    expect(isAgentctlError(new Error('x'))).toBe(false);
    expect(isProtocolError(new ProtocolError(req, 'bad'))).toBe(true);
  });

  it.each([
    [new AgentctlHttpError(req, { status: 500, code: 'internal', serverMessage: '', mayHaveBeenApplied: true }), true],
    [new AgentctlTimeoutError(req, { timeoutMs: 5, mayHaveBeenApplied: true }), true],
    [new AgentctlUnreachableError(req, 'x', { mayHaveBeenApplied: false }), false],
    [new ProtocolError(req, 'x'), false],
    [new Error('x'), false],
  ])('mayHaveBeenApplied(%s) is %s', (err, expected) => {
    expect(mayHaveBeenApplied(err)).toBe(expected);
  });
});
