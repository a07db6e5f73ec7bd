/**
 * Git in an instance's workspace.
 * @module
 */
import { GitCommitResponseSchema, GitDiffSchema, GitLogSchema, GitStatusSchema, instanceRoutes } from '../protocol/index.js';
import type { GitCommitRequest, GitCommitResponse, GitDiff, GitLog, GitStatus } from '../protocol/index.js';
import type { CallOptions, HttpTransport } from './http.js';

interface DiffOptions extends CallOptions {
  /** A ref to diff against; absent = unstaged changes against the index. */
  readonly base?: string;
  /** Limit the diff to this path. */
  readonly path?: string;
}

interface LogOptions extends CallOptions {
  /** Max commits (max 1000). @default 50 */
  readonly limit?: number;
  /** @default "HEAD" */
  readonly ref?: string;
}

/** `InstanceClient.git`: status, diff, log and commit. */
export class GitClient {
  constructor(private readonly transport: HttpTransport) {}

  status(options: CallOptions = {}): Promise<GitStatus> {
    return this.transport.request(
      { method: 'GET', path: instanceRoutes.gitStatus, schema: GitStatusSchema, idempotent: true },
      options,
    );
  }

  diff(options: DiffOptions = {}): Promise<GitDiff> {
    return this.transport.request(
      {
        method: 'GET',
        path: instanceRoutes.gitDiff,
        query: { base: options.base, path: options.path },
        schema: GitDiffSchema,
        idempotent: true,
      },
      options,
    );
  }

  log(options: LogOptions = {}): Promise<GitLog> {
    return this.transport.request(
      {
        method: 'GET',
        path: instanceRoutes.gitLog,
        query: { limit: options.limit, ref: options.ref },
        schema: GitLogSchema,
        idempotent: true,
      },
      options,
    );
  }

  /** Creates a commit. Never retried: on an ambiguous failure compare `log()` before trying again. */
  commit(request: GitCommitRequest, options: CallOptions = {}): Promise<GitCommitResponse> {
    return this.transport.request(
      { method: 'POST', path: instanceRoutes.gitCommit, body: request, schema: GitCommitResponseSchema, idempotent: false },
      options,
    );
  }
}
