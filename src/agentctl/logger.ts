/**
 * pino logging to stderr as JSON lines. Synchronous writes: the daemon logs little, and a log line
 * must not be lost when the process exits right after writing it.
 * @module
 */
import pino, { type Logger } from 'pino';
import type { LogLevel } from './config.js';

export function createLogger(level: LogLevel): Logger {
  return pino(
    {
      level,
      base: { pid: process.pid, name: 'agentctl' },
      // Belt and braces: handlers never log headers, but if a request object slips in, drop secrets.
      redact: { paths: ['req.headers.authorization', 'headers.authorization', 'token', 'nonce'], censor: '[redacted]' },
    },
    pino.destination({ fd: 2, sync: true }),
  );
}
