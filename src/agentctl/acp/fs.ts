/**
 * The client side of ACP's `fs/read_text_file` and `fs/write_text_file`, confined to the workspace
 * through the same helpers as the files API (a path outside it, or through a link leading out, is
 * refused). Paths come from the agent, absolute as ACP requires (relative ones are taken from the
 * workspace root).
 * @module
 */
import { readFileContent, writeFileContent, type Workspace } from '../workspace/files.js';

/** The text of `path`, from 1-based `line` and at most `limit` lines when given. */
export async function readTextFile(ws: Workspace, path: string, line?: number | null, limit?: number | null): Promise<string> {
  const file = await readFileContent(ws, path);
  const text = Buffer.from(file.content, 'base64').toString('utf8');
  if ((line === undefined || line === null) && (limit === undefined || limit === null)) return text;
  return sliceLines(text, line ?? 1, limit ?? null);
}

/** Lines `line` (1-based) onwards, at most `limit` of them, with their line ends. */
export function sliceLines(text: string, line: number, limit: number | null): string {
  const lines = text.split(/(?<=\n)/);
  const start = Math.max(0, line - 1);
  return lines.slice(start, limit === null ? undefined : start + Math.max(0, limit)).join('');
}

/** Writes `content` to `path` (atomically, creating parent directories). */
export async function writeTextFile(ws: Workspace, path: string, content: string): Promise<void> {
  await writeFileContent(ws, { path, content, encoding: 'utf8', mkdirs: true });
}
