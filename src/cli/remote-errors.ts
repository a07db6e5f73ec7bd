/**
 * How errors read when berth talks to a remote controller: what went wrong with the connection
 * (unreachable, TLS verification, a refused token) and what to do next. Pure: used by
 * describeError in exit-codes.ts, which loads on every failure.
 * @module
 */

/** Thrown by `berth logout NAME` / `berth context use NAME` for a context that is not in config.yaml. */
export class ContextNotFoundError extends Error {
  override readonly name = 'ContextNotFoundError';
  constructor(
    readonly context: string,
    known: readonly string[],
  ) {
    super(`no context named ${JSON.stringify(context)} (${known.length > 0 ? `contexts: ${known.join(', ')}` : 'none yet: berth login URL'})`);
  }
}

/** Codes of a failed TLS verification or handshake, as Node reports them on the socket error. */
const TLS_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
  'ERR_SSL_WRONG_VERSION_NUMBER',
]);

/** The TLS failure somewhere in `err`'s cause chain (its code and message), if any. */
export function tlsFailure(err: unknown): { code: string; message: string } | null {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && TLS_CODES.has(code)) return { code, message: (e as Error).message ?? code };
  }
  return null;
}

/** The first socket error code (ECONNREFUSED, ENOTFOUND …) in `err`'s cause chain. */
function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== undefined && e !== null && depth < 8; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}

interface Report {
  code: number;
  message: string;
  hint?: string;
}

/**
 * The report for an error of a command run against `server` (null: describeError's usual one).
 * `context`: the context the server came from, if any (named in the login hint).
 */
export function describeRemoteError(e: Error, server: string, context: string | null): Report | null {
  const login = `berth login ${server}${context !== null ? ` --name ${context}` : ''}`;
  switch (e.name) {
    case 'ControllerUnreachableError': {
      const tls = tlsFailure(e);
      if (tls !== null && (tls.code === 'EPROTO' || tls.code === 'ERR_SSL_WRONG_VERSION_NUMBER')) {
        return { code: 5, message: `${server} did not answer with TLS (${tls.code})`, hint: 'check the URL: a plain-HTTP server or the wrong port?' };
      }
      if (tls !== null) {
        return {
          code: 5,
          message: `TLS verification of ${server} failed: ${tls.message} (${tls.code})`,
          hint: `if its certificate comes from a private CA, give that CA's bundle: ${login} --ca FILE`,
        };
      }
      const detail = errorCode(e);
      return {
        code: 5,
        message: `cannot reach the berth controller at ${server}${detail ? ` (${detail})` : ''}`,
        hint: 'check the URL and that the server is up and reachable from here (berth context shows which server berth uses)',
      };
    }
    case 'BerthApiError':
      if ((e as Error & { status?: number }).status === 401) {
        return { code: 1, message: `${server} refused the API token (${e.message})`, hint: `log in with a current token: ${login}` };
      }
      return null;
    default:
      return null;
  }
}

/** Reports for the config file and context errors, whichever server is in use. */
export function describeConfigError(e: Error): Report | null {
  if (e.name === 'RemoteConfigError') return { code: 1, message: `invalid config: ${e.message}`, hint: 'fix the file, or log in again: berth login URL' };
  if (e.name === 'ContextNotFoundError') return { code: 3, message: e.message, hint: 'list them with: berth context ls' };
  return null;
}
