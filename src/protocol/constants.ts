/**
 * Names and defaults shared by agentctl, its client and the executors that launch it.
 * Every reserved name lives here once, so composition and validation cannot drift apart.
 * @module
 */

/** Default control port of agentctl (loopback only). */
/** In a process start's argv and env values: the path of its `agent_state` directory (see processes.ts). */
export const AGENT_STATE_PLACEHOLDER = '{{agent_state}}';

export const DEFAULT_CONTROL_PORT = 8765;
/** Default instance port range, inclusive. */
export const DEFAULT_INSTANCE_PORTS = { first: 41001, last: 41100 } as const;

/** Environment variables read by agentctl. */
export const ENV = {
  controlPort: 'AGENTCTL_PORT',
  instancePorts: 'AGENTCTL_INSTANCE_PORTS',
  bootstrapNonce: 'AGENTCTL_BOOTSTRAP_NONCE',
  /**
   * A file holding the bootstrap nonce instead (absolute path): read and removed at start, before
   * agentctl serves, and again at a handshake when a new one was written meanwhile (a restarted
   * agentctl, whose controller delivers a fresh nonce). Keeps the nonce out of every environment.
   */
  bootstrapNonceFile: 'AGENTCTL_BOOTSTRAP_NONCE_FILE',
  stateDir: 'AGENTCTL_STATE_DIR',
  logLevel: 'AGENTCTL_LOG_LEVEL',
  maxProcesses: 'AGENTCTL_MAX_PROCESSES',
  maxOutputBytes: 'AGENTCTL_MAX_OUTPUT_BYTES',
  /** Milliseconds between SIGTERM and SIGKILL when agentctl stops processes (default 5000). */
  stopGraceMs: 'AGENTCTL_STOP_GRACE_MS',
  /**
   * Comma-separated names of variables of agentctl's own environment that its children inherit
   * besides {@link CHILD_BASE_ENV} (e.g. what a Pod template sets on the main container).
   */
  passEnv: 'AGENTCTL_PASS_ENV',
  /**
   * An inherited file descriptor agentctl writes its port report to (one JSON line, see
   * port-report.ts) once it listens, then closes. Set by the local executor, which starts agentctl
   * on port 0; unset (the Kubernetes executor, fixed port 8765) nothing is reported.
   */
  reportFd: 'AGENTCTL_REPORT_FD',
  /**
   * An inherited file descriptor holding a listening Unix socket the control server serves on too
   * (the control and, by X-Instance-ID, every instance API). Set by the local executor for a sandbox
   * without a network of its own: the controller binds the socket where the sandbox cannot reach it.
   */
  controlFd: 'AGENTCTL_CONTROL_FD',
  /**
   * `127.0.0.1:PORT=/path/to.sock`: agentctl listens on that loopback address and pipes every
   * connection to the Unix socket (the egress proxy's, bound into a sandbox without a network).
   */
  egressRelay: 'AGENTCTL_EGRESS_RELAY',
} as const;

/**
 * The base environment of every workspace process (agent, exec, shell, git): only these names of
 * agentctl's own environment are inherited, plus those listed in `AGENTCTL_PASS_ENV`; everything
 * else a process gets comes from the instance env (profile, launch `--env`, approved secrets) and
 * the process request. Executors start agentctl with the same list from the controller's env.
 */
export const CHILD_BASE_ENV = ['PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'TERM', 'COLORTERM', 'TZ', 'TMPDIR'] as const;
/** Prefixes of base environment names (the locale categories `LC_ALL`, `LC_CTYPE` …). */
export const CHILD_BASE_ENV_PREFIXES = ['LC_'] as const;

/** Request headers of the instance API. */
export const HEADER = {
  authorization: 'authorization',
  instanceId: 'x-instance-id',
} as const;

/** Limits the daemon enforces and the client may rely on. */
export const LIMITS = {
  /** Largest accepted JSON request body (file writes are base64 inside JSON). */
  maxBodyBytes: 16 * 1024 * 1024,
  /** Largest file a single read returns. */
  maxFileReadBytes: 8 * 1024 * 1024,
  /** Largest chunk list returned by one output read. */
  maxOutputPage: 1000,
  /** Longest an events request may wait for a new event (`wait`, ms): under every proxy's idle timeout. */
  maxEventWaitMs: 20_000,
  /** Default cap of concurrently running processes per instance. */
  defaultMaxProcesses: 32,
  /** Default retained output per process (older chunks are dropped, their sequence numbers stay). */
  defaultMaxOutputBytes: 8 * 1024 * 1024,
  /** Largest list of entries returned by a tree listing. */
  maxTreeEntries: 10_000,
  /** Largest diff text returned by one git diff (longer diffs are cut and marked truncated). */
  maxDiffBytes: 4 * 1024 * 1024,
} as const;

/** API path prefix of versioned routes. */
export const API_V1 = '/api/v1';
