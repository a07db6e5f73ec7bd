/**
 * agentctl configuration: the process environment → a resolved, validated, read-only config.
 * Every default sits here; a malformed value is an error naming the variable, never a silent default.
 * @module
 */
import { DEFAULT_CONTROL_PORT, DEFAULT_INSTANCE_PORTS, ENV, LIMITS } from '../protocol/index.js';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { parsePassEnv } from './processes/child-env.js';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export interface ResolvedAgentctlConfig {
  /** Control port on 127.0.0.1; 0 binds any free port (reported on `reportFd`). @default 8765 */
  readonly controlPort: number;
  /** Candidate instance ports, in allocation order; `[0]`: any free port per instance. @default 41001-41100 */
  readonly instancePorts: readonly number[];
  /** Inherited file descriptor the port report is written to once listening, then closed; `null`: none. */
  readonly reportFd: number | null;
  /** One-shot bootstrap nonce; `null` disables the handshake (every handshake → 403) unless a nonce file is set. */
  readonly bootstrapNonce: string | null;
  /** Absolute path of the nonce file (see `ENV.bootstrapNonceFile`); `null`: none. */
  readonly bootstrapNonceFile: string | null;
  /**
   * Root of the persistent per-instance state (process metadata and output logs).
   * `null` → `<workspace>/.agentctl/state/<instance id>` (a self-ignoring directory, see state-dir.ts).
   */
  readonly stateDir: string | null;
  readonly logLevel: LogLevel;
  /** Concurrently running processes per instance. @default 32 */
  readonly maxProcesses: number;
  /** Retained output per process, in bytes. @default 8 MiB */
  readonly maxOutputBytes: number;
  /** Grace between SIGTERM and SIGKILL when stopping processes, in milliseconds. @default 5000 */
  readonly stopGraceMs: number;
  /**
   * Names of agentctl's own environment variables its children inherit besides the base list
   * (`CHILD_BASE_ENV`). @default [] (children see only the base list of agentctl's environment)
   */
  readonly passEnv: readonly string[];
  /** Inherited fd of a listening Unix socket the control server serves on too (see `ENV.controlFd`); `null`: none. */
  readonly controlFd: number | null;
  /** A loopback address relayed to a Unix socket (see `ENV.egressRelay`); `null`: none. */
  readonly egressRelay: EgressRelay | null;
}

/** Where agentctl's egress relay listens (a loopback address inside its sandbox) and what it reaches. */
export interface EgressRelay {
  readonly host: string;
  readonly port: number;
  /** Absolute path of the Unix socket every connection is piped to. */
  readonly socket: string;
}

/** Shortest accepted bootstrap nonce (Berth's executors send 64 hex characters). */
const MIN_NONCE_LENGTH = 16;

type Env = Readonly<Record<string, string | undefined>>;

function intVar(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigFieldError(name, `must be an integer between ${min} and ${max}`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigFieldError(name, `must be an integer between ${min} and ${max}`);
  return value;
}

function port(name: string, text: string): number {
  if (!/^\d+$/.test(text)) throw new ConfigFieldError(name, `must be ports or ranges like "41001-41100" (got "${text}")`);
  const value = Number(text);
  if (value < 1 || value > 65535) throw new ConfigFieldError(name, `port ${value} must be between 1 and 65535`);
  return value;
}

/**
 * Parses a port list: comma-separated single ports and inclusive ranges, e.g. `41001-41100` or
 * `41001-41010,41500`. Duplicates are dropped; order is kept.
 */
export function parsePortList(name: string, raw: string): number[] {
  const ports = new Set<number>();
  for (const part of raw.split(',')) {
    const item = part.trim();
    if (item === '') throw new ConfigFieldError(name, 'must not contain empty entries');
    const dash = item.indexOf('-');
    if (dash === -1) {
      ports.add(port(name, item));
      continue;
    }
    const first = port(name, item.slice(0, dash).trim());
    const last = port(name, item.slice(dash + 1).trim());
    if (last < first) throw new ConfigFieldError(name, `range "${item}" must not end before it starts`);
    if (last - first > 65535) throw new ConfigFieldError(name, `range "${item}" is too large`);
    for (let p = first; p <= last; p++) ports.add(p);
  }
  return [...ports];
}

/** Resolves the agentctl config from an environment (pass `process.env` at the entry point only). */
export function parseAgentctlConfig(env: Env): ResolvedAgentctlConfig {
  const controlPort = intVar(env, ENV.controlPort, DEFAULT_CONTROL_PORT, 0, 65535);
  const rawPorts = env[ENV.instancePorts]?.trim();
  const instancePorts =
    rawPorts === undefined || rawPorts === ''
      ? parsePortList(ENV.instancePorts, `${DEFAULT_INSTANCE_PORTS.first}-${DEFAULT_INSTANCE_PORTS.last}`)
      : rawPorts === '0'
        ? [0]
        : parsePortList(ENV.instancePorts, rawPorts);
  if (controlPort !== 0 && instancePorts.includes(controlPort)) {
    throw new ConfigFieldError(ENV.instancePorts, `must not include the control port ${controlPort}`);
  }

  const nonce = env[ENV.bootstrapNonce];
  let bootstrapNonce: string | null = null;
  if (nonce !== undefined && nonce !== '') {
    // The value itself is never echoed: it is a secret.
    if (nonce.length > 512) throw new ConfigFieldError(ENV.bootstrapNonce, 'must be at most 512 characters');
    // Any local process can call the unauthenticated handshake as often as it likes.
    if (nonce.length < MIN_NONCE_LENGTH) {
      throw new ConfigFieldError(ENV.bootstrapNonce, `must be at least ${MIN_NONCE_LENGTH} characters (use a random value)`);
    }
    bootstrapNonce = nonce;
  }

  const nonceFileRaw = env[ENV.bootstrapNonceFile]?.trim();
  let bootstrapNonceFile: string | null = null;
  if (nonceFileRaw !== undefined && nonceFileRaw !== '') {
    if (!nonceFileRaw.startsWith('/')) throw new ConfigFieldError(ENV.bootstrapNonceFile, 'must be an absolute path');
    if (bootstrapNonce !== null) throw new ConfigFieldError(ENV.bootstrapNonceFile, `cannot be set together with ${ENV.bootstrapNonce} (choose one)`);
    bootstrapNonceFile = nonceFileRaw;
  }

  const stateRaw = env[ENV.stateDir]?.trim();
  let stateDir: string | null = null;
  if (stateRaw !== undefined && stateRaw !== '') {
    if (!stateRaw.startsWith('/')) throw new ConfigFieldError(ENV.stateDir, 'must be an absolute path');
    stateDir = stateRaw;
  }

  const levelRaw = (env[ENV.logLevel]?.trim() ?? '').toLowerCase();
  const logLevel = levelRaw === '' ? 'info' : LOG_LEVELS.find((l) => l === levelRaw);
  if (logLevel === undefined) throw new ConfigFieldError(ENV.logLevel, `must be one of ${LOG_LEVELS.join(', ')}`);

  const pass = parsePassEnv(env[ENV.passEnv]);
  if ('invalid' in pass) throw new ConfigFieldError(ENV.passEnv, `entry "${pass.invalid}" ${pass.why} (give comma-separated names)`);

  const fdRaw = env[ENV.reportFd]?.trim();
  // 0-2 are stdio: a report there would go to the log (or nowhere) and close it
  const reportFd = fdRaw === undefined || fdRaw === '' ? null : intVar(env, ENV.reportFd, 3, 3, 65535);

  const controlFdRaw = env[ENV.controlFd]?.trim();
  const controlFd = controlFdRaw === undefined || controlFdRaw === '' ? null : intVar(env, ENV.controlFd, 4, 3, 65535);
  if (controlFd !== null && controlFd === reportFd) throw new ConfigFieldError(ENV.controlFd, `must not be the report fd ${reportFd}`);

  return Object.freeze({
    controlPort,
    instancePorts: Object.freeze(instancePorts),
    reportFd,
    bootstrapNonce,
    bootstrapNonceFile,
    stateDir,
    logLevel,
    maxProcesses: intVar(env, ENV.maxProcesses, LIMITS.defaultMaxProcesses, 1, 4096),
    maxOutputBytes: intVar(env, ENV.maxOutputBytes, LIMITS.defaultMaxOutputBytes, 1024, 1024 * 1024 * 1024),
    stopGraceMs: intVar(env, ENV.stopGraceMs, 5000, 0, 600_000),
    passEnv: Object.freeze(pass.names),
    controlFd,
    egressRelay: parseEgressRelay(env[ENV.egressRelay]),
  });
}

/** `127.0.0.1:3128=/run/egress.sock` → the relay; only a 127.x.y.z address (the relay is for the sandbox's own loopback). */
function parseEgressRelay(raw: string | undefined): EgressRelay | null {
  const text = raw?.trim() ?? '';
  if (text === '') return null;
  const m = /^(127\.\d{1,3}\.\d{1,3}\.\d{1,3}):(\d{1,5})=(\/.*)$/.exec(text);
  if (m === null) throw new ConfigFieldError(ENV.egressRelay, 'must be 127.x.y.z:PORT=/absolute/path/to.sock');
  const [, host = '', portText = '', socket = ''] = m;
  if (host.split('.').some((octet) => Number(octet) > 255)) throw new ConfigFieldError(ENV.egressRelay, `${host} is not an IPv4 address`);
  const relayPort = Number(portText);
  if (relayPort < 1 || relayPort > 65535) throw new ConfigFieldError(ENV.egressRelay, `port ${relayPort} must be between 1 and 65535`);
  return Object.freeze({ host, port: relayPort, socket });
}
