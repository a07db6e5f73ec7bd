/**
 * The one error type of both HTTP servers (agentctl's and `berth serve`'s): a code from the
 * server's wire vocabulary, the status it is sent with, and optionally the offending field or the
 * errno of a failed spawn. The servers turn it into their `{"error":{…}}` envelope in one place.
 * @module
 */

/**
 * Codes every HTTP server here shares, with their usual status. The kit raises some of them
 * itself (`bad_request`, `body_too_large`, `not_found`, `method_not_allowed`, `unauthorized`), so
 * each server's vocabulary includes at least those.
 */
export const HTTP_ERROR_STATUS = {
  bad_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  body_too_large: 413,
  internal: 500,
  not_implemented: 501,
  unavailable: 503,
} as const;

type HttpErrorCode = keyof typeof HTTP_ERROR_STATUS;

interface HttpErrorOptions {
  readonly cause?: unknown;
  /** The dotted path of the offending field (`env.BAD-NAME`), sent as the body's `field`. */
  readonly field?: string;
  /** For a failed spawn: its errno (`ENOENT`), sent as the body's `errno`. */
  readonly errno?: string;
}

/** Thrown by route handlers and helpers for any failure the caller is told about with a status and a code. */
export class HttpError<C extends string = string> extends Error {
  override readonly name = 'HttpError';
  readonly status: number;
  readonly field: string | undefined;
  readonly errno: string | undefined;

  /** A shared code takes its usual status (HTTP_ERROR_STATUS); any other code names its status. */
  constructor(code: C & HttpErrorCode, message: string, options?: HttpErrorOptions);
  constructor(code: C, message: string, options: HttpErrorOptions & { readonly status: number });
  constructor(
    readonly code: C,
    message: string,
    options: HttpErrorOptions & { readonly status?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.status = options.status ?? HTTP_ERROR_STATUS[code as HttpErrorCode];
    this.field = options.field;
    this.errno = options.errno;
  }
}

/**
 * Type guard that survives duplicate module copies (checks the stable `name`); with `codes`, also
 * that the code is one of them.
 */
export function isHttpError<C extends string = string>(err: unknown, codes?: readonly C[]): err is HttpError<C> {
  if (!(err instanceof Error) || err.name !== 'HttpError') return false;
  const { code, status } = err as Partial<HttpError>;
  if (typeof code !== 'string' || typeof status !== 'number') return false;
  return codes === undefined || (codes as readonly string[]).includes(code);
}

/** Builds HttpErrors of one wire vocabulary, each with the status its table gives the code. */
export function httpErrorFactory<C extends string>(statusOf: Readonly<Record<C, number>>) {
  return (code: C, message: string, options: HttpErrorOptions = {}): HttpError<C> => new HttpError(code, message, { ...options, status: statusOf[code] });
}
