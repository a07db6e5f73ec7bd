import { describe, expect, it } from 'vitest';
import { parseAgentctlConfig, parsePortList } from './config.js';
import { ConfigFieldError } from '../shared/config-field-error.js';

function fieldError(fn: () => unknown): ConfigFieldError {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigFieldError) return err;
    throw err;
  }
  throw new Error('expected a ConfigFieldError');
}

describe('parseAgentctlConfig', () => {
  it('applies every default to an empty environment', () => {
    const config = parseAgentctlConfig({});
    expect(config).toMatchObject({
      controlPort: 8765,
      bootstrapNonce: null,
      stateDir: null,
      logLevel: 'info',
      maxProcesses: 32,
      maxOutputBytes: 8 * 1024 * 1024,
      stopGraceMs: 5000,
      passEnv: [],
    });
    expect(config.instancePorts).toHaveLength(100);
    expect(config.instancePorts[0]).toBe(41001);
    expect(Object.isFrozen(config)).toBe(true);
  });

  it('reads every variable', () => {
    const config = parseAgentctlConfig({
      AGENTCTL_PORT: '9000',
      AGENTCTL_INSTANCE_PORTS: '9001-9003, 9010',
      AGENTCTL_BOOTSTRAP_NONCE: 'nonce-of-16-chars',
      AGENTCTL_STATE_DIR: '/var/state',
      AGENTCTL_LOG_LEVEL: 'DEBUG',
      AGENTCTL_MAX_PROCESSES: '4',
      AGENTCTL_MAX_OUTPUT_BYTES: '2048',
      AGENTCTL_STOP_GRACE_MS: '0',
      AGENTCTL_PASS_ENV: 'FROM_POD,OTHER',
      AGENTCTL_REPORT_FD: '3',
      AGENTCTL_CONTROL_FD: '5',
      AGENTCTL_EGRESS_RELAY: '127.0.0.1:3128=/tmp/egress.sock',
    });
    expect(config).toEqual({
      controlPort: 9000,
      instancePorts: [9001, 9002, 9003, 9010],
      reportFd: 3,
      bootstrapNonce: 'nonce-of-16-chars',
      bootstrapNonceFile: null,
      stateDir: '/var/state',
      logLevel: 'debug',
      maxProcesses: 4,
      maxOutputBytes: 2048,
      stopGraceMs: 0,
      passEnv: ['FROM_POD', 'OTHER'],
      controlFd: 5,
      egressRelay: { host: '127.0.0.1', port: 3128, socket: '/tmp/egress.sock' },
    });
  });

  it.each([
    ['AGENTCTL_PORT', 'abc'],
    ['AGENTCTL_PORT', '70000'],
    ['AGENTCTL_PORT', '-1'],
    ['AGENTCTL_INSTANCE_PORTS', '5-1'],
    ['AGENTCTL_INSTANCE_PORTS', '1,,2'],
    ['AGENTCTL_INSTANCE_PORTS', '8765'],
    ['AGENTCTL_STATE_DIR', 'relative/dir'],
    ['AGENTCTL_BOOTSTRAP_NONCE_FILE', 'relative/nonce'],
    ['AGENTCTL_LOG_LEVEL', 'loud'],
    ['AGENTCTL_MAX_PROCESSES', '0'],
    ['AGENTCTL_MAX_OUTPUT_BYTES', '1.5'],
    ['AGENTCTL_PASS_ENV', 'OK,not-a-name'],
    ['AGENTCTL_PASS_ENV', 'AGENTCTL_BOOTSTRAP_NONCE'],
    ['AGENTCTL_REPORT_FD', '2'],
    ['AGENTCTL_REPORT_FD', 'fd3'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(fieldError(() => parseAgentctlConfig({ [name]: value })).path).toBe(name);
  });

  it('takes port 0 (any free port) for the control port and the instances, as the local executor starts it', () => {
    const config = parseAgentctlConfig({ AGENTCTL_PORT: '0', AGENTCTL_INSTANCE_PORTS: '0', AGENTCTL_REPORT_FD: '3' });
    expect(config).toMatchObject({ controlPort: 0, instancePorts: [0], reportFd: 3 });
    expect(parseAgentctlConfig({}).reportFd, 'no report without the variable (Kubernetes: fixed port 8765)').toBeNull();
  });

  it('reads the control socket fd and the egress relay of a sandbox without a network (the local executor under a network policy)', () => {
    const config = parseAgentctlConfig({ AGENTCTL_REPORT_FD: '3', AGENTCTL_CONTROL_FD: '4', AGENTCTL_EGRESS_RELAY: ' 127.0.0.1:3128=/tmp/.berth-egress.sock ' });
    expect(config).toMatchObject({ controlFd: 4, egressRelay: { host: '127.0.0.1', port: 3128, socket: '/tmp/.berth-egress.sock' } });
    expect(parseAgentctlConfig({})).toMatchObject({ controlFd: null, egressRelay: null });
  });

  it.each([
    ['AGENTCTL_CONTROL_FD', '2'],
    ['AGENTCTL_CONTROL_FD', 'four'],
    ['AGENTCTL_EGRESS_RELAY', '0.0.0.0:3128=/tmp/e.sock'],
    ['AGENTCTL_EGRESS_RELAY', '10.0.0.1:3128=/tmp/e.sock'],
    ['AGENTCTL_EGRESS_RELAY', '127.0.0.1:3128=relative.sock'],
    ['AGENTCTL_EGRESS_RELAY', '127.0.0.1:0=/tmp/e.sock'],
    ['AGENTCTL_EGRESS_RELAY', '127.0.0.1:70000=/tmp/e.sock'],
    ['AGENTCTL_EGRESS_RELAY', '127.0.0.256:3128=/tmp/e.sock'],
    ['AGENTCTL_EGRESS_RELAY', '127.0.0.1=/tmp/e.sock'],
  ])('rejects %s=%s naming the variable', (name, value) => {
    expect(fieldError(() => parseAgentctlConfig({ [name]: value })).path).toBe(name);
  });

  it('rejects a control socket fd that is the report fd', () => {
    expect(fieldError(() => parseAgentctlConfig({ AGENTCTL_REPORT_FD: '4', AGENTCTL_CONTROL_FD: '4' })).path).toBe('AGENTCTL_CONTROL_FD');
  });

  it('rejects a nonce too short to resist guessing: the handshake is reachable by every local process', () => {
    const err = fieldError(() => parseAgentctlConfig({ AGENTCTL_BOOTSTRAP_NONCE: 'short-secret' }));
    expect(err.path).toBe('AGENTCTL_BOOTSTRAP_NONCE');
    expect(err.message).not.toContain('short-secret');
  });

  it('never echoes the nonce in its errors', () => {
    const secret = 'x'.repeat(600);
    const err = fieldError(() => parseAgentctlConfig({ AGENTCTL_BOOTSTRAP_NONCE: secret }));
    expect(err.message).not.toContain(secret);
  });
});

describe('parsePortList', () => {
  it('keeps order and drops duplicates', () => {
    expect(parsePortList('P', '3,1-2,2')).toEqual([3, 1, 2]);
  });
});
