/**
 * `berth serve`'s last-resort handlers: an error nobody caught is logged, and serve keeps serving
 * when the error is one connection failing (a reset peer, a broken pipe, a bad WebSocket frame) or
 * a promise nobody awaited; anything else may have left state half-changed, so serve exits.
 * @module
 */
import type { EventEmitter } from 'node:events';
import { sanitize } from '../shared/sanitize.js';

/** Error codes of one connection failing: they end that connection, never the server. */
const CONNECTION_CODES: ReadonlySet<string> = new Set([
  'ECONNRESET',
  'EPIPE',
  'ECONNABORTED',
  'ECONNREFUSED',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
  'ERR_STREAM_PREMATURE_CLOSE',
  'ERR_SOCKET_CLOSED',
]);

type LastResortKind = 'uncaughtException' | 'unhandledRejection';

/**
 * Whether serve can keep serving after `err` reached the top. A rejected promise nobody awaited
 * left no synchronous work half-done; an uncaught exception only when it is a connection's
 * failure (a Node network or stream code, or any `ws` protocol error: `WS_ERR_*`).
 */
export function survivable(kind: LastResortKind, err: unknown): boolean {
  if (kind === 'unhandledRejection') return true;
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && (CONNECTION_CODES.has(code) || code.startsWith('WS_ERR_'));
}

/** The logging the handlers need (a pino logger fits). */
interface LastResortLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

/**
 * Installs the handlers on `proc` and returns a function that removes them. While installed they
 * replace the earlier `unhandledRejection`/`uncaughtException` listeners (the CLI's exits on the
 * first one), which are put back afterwards. `fatal` is called for an error serve cannot survive.
 */
export function installLastResort(proc: EventEmitter, log: LastResortLogger, fatal: (err: unknown) => void): () => void {
  const kinds: LastResortKind[] = ['uncaughtException', 'unhandledRejection'];
  const saved = new Map(kinds.map((k) => [k, proc.listeners(k) as ((...args: unknown[]) => void)[]] as const));
  const handlers = new Map<LastResortKind, (err: unknown) => void>();
  for (const kind of kinds) {
    for (const l of saved.get(kind) ?? []) proc.off(kind, l);
    const handler = (err: unknown): void => {
      // sanitized like every other error serve logs: an unexpected error may quote a URL or a token
      const entry = {
        kind,
        err:
          err instanceof Error
            ? { name: err.name, message: sanitize(err.message), code: (err as { code?: unknown }).code, stack: sanitize(err.stack ?? '', { maxLength: 8192 }) }
            : { value: sanitize(String(err)) },
      };
      if (survivable(kind, err)) {
        log.warn(entry, 'uncaught error (serve keeps running)');
        return;
      }
      log.error(entry, 'uncaught error (serve exits)');
      fatal(err);
    };
    handlers.set(kind, handler);
    proc.on(kind, handler);
  }
  return () => {
    for (const kind of kinds) {
      const h = handlers.get(kind);
      if (h) proc.off(kind, h);
      for (const l of saved.get(kind) ?? []) proc.on(kind, l);
    }
  };
}
