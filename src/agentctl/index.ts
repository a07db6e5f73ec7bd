/**
 * agentctl as a library: start the daemon in process (tests, a future all-in-one local mode).
 * The executable entry point is main.ts.
 * @module
 */
export { parseAgentctlConfig, type ResolvedAgentctlConfig, type LogLevel } from './config.js';
export { startDaemon, type Daemon } from './daemon.js';
export { ConfigFieldError } from './errors.js';
export { createLogger } from './logger.js';
