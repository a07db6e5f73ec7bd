/**
 * Running queries and transactions on the Postgres pool so that a database restart loses nothing: a
 * transaction that fails with a connection-class error (the server went away, is shutting down or
 * starting up), or a deadlock, is retried whole, on a fresh connection, with backoff, for up to the retry budget.
 * Every inventory write is written to be safe to run twice (its first attempt may have committed
 * before the connection dropped). Error messages never carry the connection string or password.
 * @module
 */
import type { Pool, PoolClient } from 'pg';
import { errorMessage } from '../../shared/errors.js';
import { InventoryUnavailableError } from '../errors.js';

/** Runs one statement and returns its rows. */
export type Query = <R>(sql: string, params?: readonly unknown[]) => Promise<R[]>;

/** Node socket errors that mean the server is (momentarily) unreachable. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'ENOENT']);
/** SQLSTATEs of a server shutting down or starting up (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now). */
const SERVER_CODES = new Set(['57P01', '57P02', '57P03']);
/**
 * A deadlock or serialization failure: the transaction was rolled back and may be run again whole too
 * (every inventory write is safe to repeat).
 */
const RETRY_CODES = new Set(['40001', '40P01']);
/** pg's own messages for a connection that is gone (they carry no code). */
const GONE = /Connection terminated|connection error and is not queryable|timeout exceeded when trying to connect|Client was closed|not queryable/i;

/** Whether the transaction that failed with `err` may be run again whole: a lost connection, a deadlock. */
export function isRetryable(err: unknown): boolean {
  return isConnectionError(err) || (err instanceof Error && RETRY_CODES.has(String((err as { code?: unknown }).code)));
}

/** Whether `err` means the connection (not the statement) failed. */
function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || SERVER_CODES.has(code) || code.startsWith('08'))) return true;
  return GONE.test(err.message);
}

/** `text` with every secret (connection string, password, `password=` pairs) replaced by `***`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) if (s.length >= 3) out = out.split(s).join('***');
  return out.replace(/(password\s*=\s*)\S+/gi, '$1***').replace(/(postgres(?:ql)?:\/\/[^:/@\s]*:)[^@\s]*@/gi, '$1***@');
}

/** The secrets of a connection string: itself, and its password as written and decoded. */
export function urlSecrets(url: string): string[] {
  const out = [url];
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') out.push(parsed.password, decodeURIComponent(parsed.password));
  } catch {
    /* not a URL: the string itself is redacted */
  }
  return out;
}

/** Where the database is, without credentials (`postgres://host:5432/db`), for messages. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'the configured postgres database';
  }
}

interface RunnerOptions {
  /** How long a connection-class failure is retried before giving up. */
  retryBudgetMs: number;
  /** Strings never to show in an error message. */
  secrets: readonly string[];
}

const FIRST_BACKOFF_MS = 50;
const MAX_BACKOFF_MS = 1000;

export class PgRunner {
  readonly #pool: Pool;
  readonly #opts: RunnerOptions;

  constructor(pool: Pool, opts: RunnerOptions) {
    this.#pool = pool;
    this.#opts = opts;
  }

  /** Runs `fn` in one transaction (BEGIN … COMMIT), retried whole on a connection-class error. */
  transaction<T>(fn: (query: Query) => Promise<T>): Promise<T> {
    return this.#retrying(() => this.#once(fn, true));
  }

  /** Runs `fn` on one connection outside a transaction (reads), retried on a connection-class error. */
  read<T>(fn: (query: Query) => Promise<T>): Promise<T> {
    return this.#retrying(() => this.#once(fn, false));
  }

  /** `err`'s message with the connection's secrets removed. */
  redact(err: unknown): string {
    const raw = err instanceof Error ? (err as { code?: unknown }).code : undefined;
    const code = typeof raw === 'string' ? `${raw}: ` : '';
    return redact(`${code}${errorMessage(err)}`, this.#opts.secrets);
  }

  async #retrying<T>(attempt: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + this.#opts.retryBudgetMs;
    let backoff = FIRST_BACKOFF_MS;
    for (;;) {
      try {
        return await attempt();
      } catch (err) {
        if (!isRetryable(err)) throw err;
        if (Date.now() + backoff > deadline) {
          const seconds = Math.round(this.#opts.retryBudgetMs / 1000);
          throw new InventoryUnavailableError(`gave up after ${seconds} s of retries (${this.redact(err)}); check that Postgres is up and reachable`);
        }
        await new Promise((resolve) => setTimeout(resolve, backoff));
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }

  async #once<T>(fn: (query: Query) => Promise<T>, inTransaction: boolean): Promise<T> {
    const client: PoolClient = await this.#pool.connect();
    // a connection lost while this client is checked out and idle is an 'error' event: caught here, not a crash
    let lost: unknown = null;
    const onError = (err: unknown): void => {
      lost = err;
    };
    client.on('error', onError);
    let failure: unknown = null;
    const query: Query = async <R>(sql: string, params?: readonly unknown[]) => (await client.query(sql, params as unknown[] | undefined)).rows as R[];
    try {
      if (inTransaction) await client.query('BEGIN');
      const result = await fn(query);
      if (inTransaction) await client.query('COMMIT');
      return result;
    } catch (err) {
      failure = err;
      if (inTransaction && !isConnectionError(err) && lost === null) await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.removeListener('error', onError);
      // a broken connection is destroyed, not returned to the pool
      const broken = lost !== null || isConnectionError(failure);
      client.release(broken ? new Error('inventory: connection lost') : undefined);
    }
  }
}
