/**
 * Race-free access to a directory inside the workspace: the path is walked one component at a time
 * from an opened descriptor of the workspace root, each component opened with
 * `O_DIRECTORY | O_NOFOLLOW`, and symlinks met on the way are resolved by hand and checked to stay
 * inside before the walk restarts from the root. Node has no `openat()`, so the opened directory is
 * named as `/proc/self/fd/<fd>/<name>`: the kernel resolves that relative to the descriptor, not to
 * a path a process in the workspace could swap for a symlink between our check and our use.
 * (Linux only, like agentctl's other process handling; `/proc` must be mounted.)
 * @module
 */
import { constants } from 'node:fs';
import { lstat, mkdir, open, readlink, type FileHandle } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { HttpError } from '../../shared/http/index.js';
import { protocolError } from '../errors.js';
import { isInside } from './paths.js';

const DIR_FLAGS = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
/** As the kernel's MAXSYMLINKS: more symlinks than this on one path is a loop. */
const MAX_SYMLINKS = 40;

/** The path naming `name` inside the directory (or file) open as `fd`, or the descriptor itself. */
export function fdPath(fd: number, name?: string): string {
  return name === undefined ? `/proc/self/fd/${fd}` : `/proc/self/fd/${fd}/${name}`;
}

function errnoOf(err: unknown): string | undefined {
  return typeof err === 'object' && err !== null ? (err as NodeJS.ErrnoException).code : undefined;
}

/** Where the open descriptor really is (its realpath, read from `/proc/self/fd`). */
export async function realPathOf(fd: number): Promise<string> {
  return readlink(fdPath(fd));
}

function escape(rel: string): HttpError {
  return protocolError('path_escape', `path ${rel} leaves the workspace through a symlink`);
}

/**
 * Opens the directory `components` (relative to `realRoot`, no `.`/`..`) as a descriptor whose
 * real path is verified to be inside the workspace. With `mkdirs`, missing directories are created
 * on the way, each inside the descriptor of its verified parent. The caller closes the handle.
 * Throws HttpError `path_escape` (a symlink leading out, or a symlink loop), `not_found` and
 * `not_a_directory`; `rel` names the request's path in those messages.
 */
export async function openWorkspaceDir(realRoot: string, components: readonly string[], opts: { mkdirs: boolean; rel: string }): Promise<FileHandle> {
  let todo = [...components];
  let symlinks = 0;
  let dir = await open(realRoot, DIR_FLAGS);
  try {
    let here = realRoot;
    while (todo.length > 0) {
      const name = todo.shift() as string;
      let next: FileHandle | undefined;
      try {
        next = await open(fdPath(dir.fd, name), DIR_FLAGS);
      } catch (err) {
        const code = errnoOf(err);
        if (code === 'ENOENT' && opts.mkdirs) {
          try {
            await mkdir(fdPath(dir.fd, name));
          } catch (mkErr) {
            if (errnoOf(mkErr) !== 'EEXIST') throw mkErr;
          }
          // Opened again without following: a symlink planted since the mkdir is handled below.
          todo.unshift(name);
          continue;
        }
        if (code === 'ENOENT') throw protocolError('not_found', `no such file or directory: parent of ${opts.rel}`);
        // With O_DIRECTORY, Linux answers ENOTDIR (not ELOOP) for a symlink: tell the two apart.
        const isLink = code === 'ELOOP' || (code === 'ENOTDIR' && (await lstat(fdPath(dir.fd, name)).catch(() => null))?.isSymbolicLink() === true);
        if (code === 'ENOTDIR' && !isLink) throw protocolError('not_a_directory', `parent of ${opts.rel} is not a directory`);
        if (!isLink) throw err;
        // `name` is a symlink: follow it by hand, from the root, only if it stays inside.
        if (++symlinks > MAX_SYMLINKS) throw protocolError('path_escape', `path ${opts.rel}: too many levels of symbolic links`);
        let target: string;
        try {
          target = await readlink(fdPath(dir.fd, name));
        } catch (linkErr) {
          // Swapped back to a directory (or removed) since: look at this component again.
          if (errnoOf(linkErr) !== 'EINVAL' && errnoOf(linkErr) !== 'ENOENT') throw linkErr;
          todo.unshift(name);
          continue;
        }
        const landed = isAbsolute(target) ? resolve(target) : resolve(here, target);
        if (!isInside(realRoot, landed)) throw escape(opts.rel);
        const rest = relative(realRoot, landed);
        todo = [...(rest === '' ? [] : rest.split(sep)), ...todo];
        await dir.close();
        dir = await open(realRoot, DIR_FLAGS);
        here = realRoot;
        continue;
      }
      await dir.close();
      dir = next;
      here = join(here, name);
    }
    // Each step was inside; the descriptor's real path says so once more (e.g. the root itself moved).
    if (!isInside(realRoot, await realPathOf(dir.fd))) throw escape(opts.rel);
    return dir;
  } catch (err) {
    await dir.close().catch(() => undefined);
    throw err;
  }
}
