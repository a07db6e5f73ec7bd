/** The launch form's fields as a LaunchRequest (pure). @module */
import type { LaunchRequest, RepositoryRef } from '../../../src/api/index.js';

/** What the launch form holds, as typed (`env` still the text of its box). */
export interface LaunchFields {
  repository: string;
  branch: string;
  agent: string;
  executor: string;
  name: string;
  prompt: string;
  env: string;
}

export const EMPTY_LAUNCH_FIELDS: LaunchFields = { repository: '', branch: '', agent: '', executor: '', name: '', prompt: '', env: '' };

/** `https://…`, `git@host:x.git`, `file://…` are URLs; anything else is a path on the server's machine. */
export function repositoryRef(input: string, branch: string): RepositoryRef | undefined {
  const v = input.trim();
  if (!v) return undefined;
  const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(v) || /^[\w.-]+@[\w.-]+:/.test(v);
  const ref: RepositoryRef = isUrl ? { url: v } : { path: v };
  if (branch.trim()) ref.branch = branch.trim();
  return ref;
}

/** The request of the form's fields and its parsed environment: empty fields are left out. */
export function launchRequestOf(fields: LaunchFields, env: Record<string, string>): LaunchRequest {
  const req: LaunchRequest = {};
  const repo = repositoryRef(fields.repository, fields.branch);
  if (repo) req.repository = repo;
  if (fields.agent) req.agent = fields.agent;
  if (fields.executor) req.executor = fields.executor;
  if (fields.name.trim()) req.name = fields.name.trim();
  if (fields.prompt.trim()) req.prompt = fields.prompt;
  if (Object.keys(env).length > 0) req.env = env;
  return req;
}
