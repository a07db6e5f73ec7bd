/**
 * Git in an instance's workspace: parsed status, diffs, log and commit.
 * @module
 */
import { z } from 'zod';

const GitFileStatusSchema = z.object({
  path: z.string(),
  /** Set for renames and copies. */
  orig_path: z.string().nullable(),
  /** Porcelain v2 index (staged) state letter: `.`, `M`, `A`, `D`, `R`, `C`, `U`, or `?` / `!`. */
  index: z.string(),
  /** Porcelain v2 worktree state letter. */
  worktree: z.string(),
  kind: z.enum(['changed', 'renamed', 'unmerged', 'untracked', 'ignored']),
});
export type GitFileStatus = z.infer<typeof GitFileStatusSchema>;

export const GitStatusSchema = z.object({
  /** Null when HEAD is detached. */
  branch: z.string().nullable(),
  /** Null in a repository without commits. */
  head: z.string().nullable(),
  upstream: z.string().nullable(),
  ahead: z.number().int(),
  behind: z.number().int(),
  files: z.array(GitFileStatusSchema),
  clean: z.boolean(),
});
export type GitStatus = z.infer<typeof GitStatusSchema>;

export const GitDiffSchema = z.object({
  /** The base the diff was taken against (`null` = the index, i.e. unstaged changes). */
  base: z.string().nullable(),
  diff: z.string(),
  truncated: z.boolean(),
});
export type GitDiff = z.infer<typeof GitDiffSchema>;

const GitCommitInfoSchema = z.object({
  sha: z.string(),
  author_name: z.string(),
  author_email: z.string(),
  date: z.string(),
  subject: z.string(),
});

export const GitLogSchema = z.object({ commits: z.array(GitCommitInfoSchema) });
export type GitLog = z.infer<typeof GitLogSchema>;

export const GitCommitRequestSchema = z.strictObject({
  message: z.string().min(1),
  /** Stage every change (including untracked files) before committing. */
  all: z.boolean().default(true),
  /** Only these paths (relative to the workspace) are staged, when given. */
  paths: z.array(z.string().min(1)).optional(),
  author: z.strictObject({ name: z.string().min(1), email: z.string().min(1) }).optional(),
  allow_empty: z.boolean().default(false),
});
export type GitCommitRequest = z.input<typeof GitCommitRequestSchema>;

export const GitCommitResponseSchema = z.object({ sha: z.string() });
export type GitCommitResponse = z.infer<typeof GitCommitResponseSchema>;
