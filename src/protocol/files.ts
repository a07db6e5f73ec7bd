/**
 * Files of an instance's workspace. Every path is relative to the workspace and confined to it.
 * @module
 */
import { z } from 'zod';

const FileTypeSchema = z.enum(['file', 'dir', 'symlink', 'other']);
export type FileType = z.infer<typeof FileTypeSchema>;

const FileEntrySchema = z.object({
  /** Path relative to the workspace root, `/`-separated. */
  path: z.string(),
  type: FileTypeSchema,
  size: z.number().int(),
  mtime: z.string(),
});
export type FileEntry = z.infer<typeof FileEntrySchema>;

export const FileTreeSchema = z.object({
  entries: z.array(FileEntrySchema),
  /** The listing hit the entry cap. */
  truncated: z.boolean(),
});
export type FileTree = z.infer<typeof FileTreeSchema>;

export const FileContentSchema = z.object({
  path: z.string(),
  size: z.number().int(),
  encoding: z.literal('base64'),
  content: z.string(),
});
export type FileContent = z.infer<typeof FileContentSchema>;

export const WriteFileRequestSchema = z.strictObject({
  path: z.string().min(1),
  content: z.string(),
  encoding: z.enum(['utf8', 'base64']).default('utf8'),
  /** Octal file mode as a number, e.g. 0o644. */
  mode: z.number().int().min(0).max(0o7777).optional(),
  /** Create missing parent directories. */
  mkdirs: z.boolean().default(true),
});
export type WriteFileRequest = z.input<typeof WriteFileRequestSchema>;

export const WriteFileResponseSchema = z.object({ path: z.string(), size: z.number().int() });
export type WriteFileResponse = z.infer<typeof WriteFileResponseSchema>;
