/**
 * "Did the create commit?" (spec §4.5): an ambiguous error means the object may exist and must be
 * reconciled by a GET (and the create nonce); a definite one means it was not created.
 * @module
 */

/** The parts of an error the classification looks at; fits client-node's ApiException and Node errors. */
interface ErrorLike {
  /** HTTP status (some clients). */
  statusCode?: number;
  /** ApiException: the HTTP status (number); Node: the errno code (`ECONNRESET`). */
  code?: number | string;
  name?: string;
  message?: string;
  /** ApiException: the response body, a JSON `Status` string. */
  body?: unknown;
  cause?: unknown;
}

/** Connection failures after the request may have been sent. */
const AMBIGUOUS_CODES = new Set([
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'ECONNABORTED',
  'ESOCKETTIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENETDOWN',
  'UND_ERR_SOCKET',
  'UND_ERR_CLOSED',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'ERR_STREAM_PREMATURE_CLOSE',
]);
/**
 * Failures before any byte reached the server: the create cannot have happened. (Treating them
 * as ambiguous would be safe too, but the reconciling GET would only fail the same way.)
 */
const DEFINITE_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'CERT_HAS_EXPIRED', 'DEPTH_ZERO_SELF_SIGNED_CERT', 'UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'ERR_TLS_CERT_ALTNAME_INVALID']);
const AMBIGUOUS_NAMES = new Set(['AbortError', 'TimeoutError']);
const AMBIGUOUS_MESSAGE = /socket hang up|\bEOF\b|unexpected end|other side closed|connection (?:reset|closed)|premature close|timed? ?out|aborted/i;

function statusReason(body: unknown): string | undefined {
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return undefined;
    }
  }
  const reason = (parsed as { reason?: unknown } | null)?.reason;
  return typeof reason === 'string' ? reason : undefined;
}

/** Whether a create that failed with `err` may nevertheless have committed. Walks the `cause` chain. */
export function isAmbiguousCreateError(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; e = (e as ErrorLike).cause, depth++) {
    const x = e as ErrorLike;
    const status = typeof x.statusCode === 'number' ? x.statusCode : typeof x.code === 'number' ? x.code : undefined;
    if (status !== undefined && status > 0) {
      const reason = statusReason(x.body);
      if (reason === 'Timeout' || reason === 'ServerTimeout') return true;
      // 408 and 5xx: the server (or a proxy in front of it) gave up; the write may have landed.
      return status === 408 || (status >= 500 && status <= 599);
    }
    if (typeof x.code === 'string') {
      if (DEFINITE_CODES.has(x.code)) return false;
      if (AMBIGUOUS_CODES.has(x.code)) return true;
    }
    if (typeof x.name === 'string' && AMBIGUOUS_NAMES.has(x.name)) return true;
    if (typeof x.message === 'string' && AMBIGUOUS_MESSAGE.test(x.message)) return true;
  }
  return false;
}
