/**
 * Error envelope and stable error codes of the agentctl API.
 * Every non-2xx response body is `{"error":{"code","message"}}`; a `spawn_failed` error also carries
 * the `errno` of the failed spawn (`ENOENT`, `EACCES`, …) so callers never parse the message.
 * @module
 */
import { z } from 'zod';

export const ERROR_CODES = [
  'bad_request', // malformed JSON, wrong types, unknown fields
  'body_too_large',
  'unauthorized', // missing or wrong bearer token
  'forbidden', // wrong instance id, replayed or wrong nonce
  'not_found',
  'method_not_allowed', // known path, other method
  'conflict', // same instance id with another workspace, process already exited, ...
  'path_escape', // a file path that leaves the workspace
  'too_many_processes',
  'file_too_large',
  'not_a_file',
  'not_a_directory',
  'git_error',
  'spawn_failed', // the command could not be started (not found, not executable, ...): see `errno`
  'unavailable', // port range exhausted, shutting down
  'internal',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** An errno name as Node reports it (`ENOENT`, `EACCES`, `E2BIG`, …; `UNKNOWN` when there was none). */
const ErrnoSchema = z.string().regex(/^[A-Z][A-Z0-9_]{1,31}$/);

export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    /** For `spawn_failed`: why the command could not be started. */
    errno: ErrnoSchema.optional(),
  }),
});

/** The HTTP status each code is sent with. */
export const ERROR_STATUS: Record<ErrorCode, number> = {
  bad_request: 400,
  body_too_large: 413,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  conflict: 409,
  path_escape: 400,
  too_many_processes: 429,
  file_too_large: 413,
  not_a_file: 400,
  not_a_directory: 400,
  git_error: 422,
  // the request names a command that cannot run here (a 4xx: the caller's to fix)
  spawn_failed: 400,
  unavailable: 503,
  internal: 500,
};
