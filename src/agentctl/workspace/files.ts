/**
 * File operations of the instance API, all confined to the workspace (see paths.ts):
 * tree listing, binary-safe reads, atomic writes and deletes (writes and deletes through opened
 * directory descriptors, see dir-fd.ts).
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { Stats } from 'node:fs';
import { lstat, open, readdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import type { z } from 'zod';
import { LIMITS, type FileContent, type FileEntry, type FileTree, type FileType, type WriteFileRequestSchema, type WriteFileResponse } from '../../protocol/index.js';
import { isProtocolError, protocolError } from '../errors.js';
import type { HttpError } from '../../shared/http/index.js';
import { WORKSPACE_STATE_DIR } from '../state-dir.js';
import { fdPath, openWorkspaceDir, realPathOf } from './dir-fd.js';
import { confine, isInside, type ConfinedPath } from './paths.js';

export interface Workspace {
  /** realpath of the workspace root */
  readonly realRoot: string;
  /** the workspace path as the controller declared it */
  readonly declaredRoot: string;
}

export const MAX_TREE_DEPTH = 32;

/** Directories listed but never descended into (large and not workspace content). */
const NO_DESCEND = new Set(['.git']);

function fileType(st: Stats): FileType {
  if (st.isSymbolicLink()) return 'symlink';
  if (st.isDirectory()) return 'dir';
  if (st.isFile()) return 'file';
  return 'other';
}

function notFound(rel: string): HttpError {
  return protocolError('not_found', `no such file or directory: ${rel}`);
}

function isErrno(err: unknown, code: string): boolean {
  return typeof err === 'object' && err !== null && (err as NodeJS.ErrnoException).code === code;
}

async function statOrNotFound(path: ConfinedPath, fn: (p: string) => Promise<Stats> = stat): Promise<Stats> {
  try {
    return await fn(path.abs);
  } catch (err) {
    if (isErrno(err, 'ENOENT') || isErrno(err, 'ENOTDIR')) throw notFound(path.rel);
    throw err;
  }
}

/**
 * Lists `path` breadth-first down to `depth` levels, without following symlinks. agentctl's own
 * state directory at the workspace root (`.agentctl`) is left out, as git leaves it out: it is
 * daemon bookkeeping, not workspace content (it can still be read by its path).
 */
export async function listTree(ws: Workspace, path: string, depth: number): Promise<FileTree> {
  const root = await confine(ws.realRoot, ws.declaredRoot, path, 'read');
  const st = await statOrNotFound(root);
  if (!st.isDirectory()) throw protocolError('not_a_directory', `not a directory: ${root.rel}`);
  const entries: FileEntry[] = [];
  let level: Array<{ abs: string; rel: string }> = [{ abs: root.abs, rel: root.rel }];
  for (let d = 0; d < depth && level.length > 0; d++) {
    const next: typeof level = [];
    for (const dir of level) {
      let names: string[];
      try {
        names = (await readdir(dir.abs)).sort();
      } catch {
        continue; // unreadable or vanished directories are skipped, not fatal
      }
      for (const name of names) {
        if (dir.abs === ws.realRoot && name === WORKSPACE_STATE_DIR) continue;
        if (entries.length >= LIMITS.maxTreeEntries) return { entries, truncated: true };
        const abs = join(dir.abs, name);
        const rel = dir.rel === '.' ? name : `${dir.rel}/${name}`;
        let entry: Stats;
        try {
          entry = await lstat(abs);
        } catch {
          continue;
        }
        const type = fileType(entry);
        entries.push({ path: rel, type, size: entry.size, mtime: entry.mtime.toISOString() });
        if (type === 'dir' && !NO_DESCEND.has(name)) next.push({ abs, rel });
      }
    }
    level = next;
  }
  return { entries, truncated: false };
}

/** Reads a whole file as base64; files above LIMITS.maxFileReadBytes are refused with 413. */
export async function readFileContent(ws: Workspace, path: string): Promise<FileContent> {
  const target = await confine(ws.realRoot, ws.declaredRoot, path, 'read');
  const st = await statOrNotFound(target);
  if (!st.isFile()) throw protocolError('not_a_file', `not a regular file: ${target.rel}`);
  if (st.size > LIMITS.maxFileReadBytes) {
    throw protocolError('file_too_large', `${target.rel} is ${st.size} bytes; the read limit is ${LIMITS.maxFileReadBytes}`);
  }
  const handle = await open(target.abs, 'r');
  try {
    // Read at most cap+1 bytes so a file that grew after stat is still caught.
    const buffer = Buffer.allocUnsafe(Math.min(st.size, LIMITS.maxFileReadBytes) + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > LIMITS.maxFileReadBytes) throw protocolError('file_too_large', `${target.rel} exceeds the read limit`);
    return { path: target.rel, size: length, encoding: 'base64', content: buffer.subarray(0, length).toString('base64') };
  } finally {
    await handle.close();
  }
}

function decodeContent(content: string, encoding: 'utf8' | 'base64'): Buffer {
  if (encoding === 'utf8') return Buffer.from(content, 'utf8');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(content) || content.length % 4 === 1) {
    throw protocolError('bad_request', 'content: must be valid base64');
  }
  return Buffer.from(content, 'base64');
}

/**
 * Writes a file atomically: a temp file in the same directory, then rename over the target. The
 * parent is reached through descriptors (see dir-fd.ts), so a directory swapped for a symlink
 * meanwhile cannot send the write outside; the final component is never followed (a symlink there
 * is replaced, not written through).
 */
export async function writeFileContent(ws: Workspace, request: z.output<typeof WriteFileRequestSchema>): Promise<WriteFileResponse> {
  const data = decodeContent(request.content, request.encoding);
  const target = await confine(ws.realRoot, ws.declaredRoot, request.path, 'write');
  if (target.abs === ws.realRoot) throw protocolError('not_a_file', 'cannot replace the workspace root');
  const name = basename(target.abs);
  const dir = await openWorkspaceDir(ws.realRoot, parentComponents(ws, target), { mkdirs: request.mkdirs, rel: target.rel });
  try {
    let mode = request.mode;
    try {
      const existing = await lstat(fdPath(dir.fd, name));
      if (existing.isDirectory()) throw protocolError('not_a_file', `${target.rel} is a directory`);
      if (mode === undefined && existing.isFile()) mode = existing.mode & 0o7777;
    } catch (err) {
      if (!isErrno(err, 'ENOENT')) throw err;
    }
    const temp = `.${name}.${randomBytes(6).toString('hex')}.tmp`;
    // 'wx' is O_CREAT | O_EXCL: never follows a symlink planted under the temp name.
    const handle = await open(fdPath(dir.fd, temp), 'wx', mode ?? 0o644);
    try {
      if (!isInside(ws.realRoot, await realPathOf(handle.fd))) throw protocolError('path_escape', `path ${target.rel} leaves the workspace`);
      await handle.writeFile(data);
      if (mode !== undefined) await handle.chmod(mode); // open() applies the umask; an explicit mode must not
      await handle.sync();
      await handle.close();
      // Both names resolve in the verified directory, whatever its path is by now.
      await rename(fdPath(dir.fd, temp), fdPath(dir.fd, name));
    } catch (err) {
      await handle.close().catch(() => undefined);
      await unlink(fdPath(dir.fd, temp)).catch(() => undefined);
      throw err;
    }
  } finally {
    await dir.close();
  }
  return { path: target.rel, size: data.length };
}

/** The directory components from the workspace root to the parent of `target`. */
function parentComponents(ws: Workspace, target: ConfinedPath): string[] {
  const rel = relative(ws.realRoot, dirname(target.abs));
  return rel === '' ? [] : rel.split(sep);
}

/**
 * Deletes a file, symlink or (with `recursive`) a directory. The workspace root is refused. The
 * parent is reached through descriptors like a write's (a symlink is deleted, never its target).
 */
export async function deletePath(ws: Workspace, path: string, recursive: boolean): Promise<void> {
  const target = await confine(ws.realRoot, ws.declaredRoot, path, 'write');
  if (target.abs === ws.realRoot) throw protocolError('bad_request', 'refusing to delete the workspace root');
  let dir;
  try {
    dir = await openWorkspaceDir(ws.realRoot, parentComponents(ws, target), { mkdirs: false, rel: target.rel });
  } catch (err) {
    if (isProtocolError(err) && err.code === 'not_found') throw notFound(target.rel);
    throw err;
  }
  try {
    const victim = fdPath(dir.fd, basename(target.abs));
    const st = await statOrNotFound({ abs: victim, rel: target.rel }, lstat);
    if (st.isDirectory() && !recursive) {
      throw protocolError('not_a_file', `${target.rel} is a directory; pass recursive=true to delete it`);
    }
    await rm(victim, { recursive, force: false });
  } finally {
    await dir.close();
  }
}
