/** The launch form's repository field as a RepositoryRef (pure). @module */
import type { RepositoryRef } from '../../../src/controller/service.js';

/** `https://…`, `git@host:x.git`, `file://…` are URLs; anything else is a path on the server's machine. */
export function repositoryRef(input: string, branch: string): RepositoryRef | undefined {
  const v = input.trim();
  if (!v) return undefined;
  const isUrl = /^[a-z][a-z0-9+.-]*:\/\//i.test(v) || /^[\w.-]+@[\w.-]+:/.test(v);
  const ref: RepositoryRef = isUrl ? { url: v } : { path: v };
  if (branch.trim()) ref.branch = branch.trim();
  return ref;
}
