/**
 * Confinement of caller-supplied paths to an instance's workspace.
 *
 * Two layers: a pure lexical check (`..`, absolute paths outside, NUL bytes), then a realpath check
 * of the deepest existing ancestor against the workspace's realpath, which catches symlinked
 * directories pointing outside. Writes and deletes check the parent only and never follow the final
 * component: renaming over or unlinking a symlink replaces the link, not its target.
 * These path checks give clear errors early; a process inside the workspace could race them (swap a
 * checked directory for a symlink before it is used), so writes and deletes are then carried out
 * through opened directory descriptors (dir-fd.ts), which that swap cannot redirect. Reads follow
 * the resolved real path and are checked after resolution.
 * @module
 */
import { lstat, realpath } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { protocolError } from '../errors.js';

/** True when `candidate` is `root` or below it (both absolute and normalized). */
export function isInside(root: string, candidate: string): boolean {
  if (candidate === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return candidate.startsWith(prefix);
}

/**
 * Resolves `input` lexically against the workspace. Relative paths are taken from the root;
 * absolute paths are accepted only inside the workspace (as declared or as its realpath).
 * Returns the absolute path below `realRoot`, or throws `path_escape` / `bad_request`.
 */
export function lexicalResolve(realRoot: string, declaredRoot: string, input: string): string {
  if (input.includes('\0')) throw protocolError('bad_request', 'path must not contain NUL bytes');
  if (input === '') throw protocolError('bad_request', 'path must not be empty');
  let abs: string;
  if (isAbsolute(input)) {
    const normalized = resolve(input);
    const declared = resolve(declaredRoot);
    if (isInside(realRoot, normalized)) abs = normalized;
    else if (isInside(declared, normalized)) abs = join(realRoot, relative(declared, normalized));
    else throw protocolError('path_escape', `path ${input} is outside the workspace`);
  } else {
    abs = resolve(realRoot, input);
  }
  if (!isInside(realRoot, abs)) throw protocolError('path_escape', `path ${input} is outside the workspace`);
  return abs;
}

/** The `/`-separated path of `abs` relative to the root (`.` for the root itself). */
export function workspaceRelative(realRoot: string, abs: string): string {
  const rel = relative(realRoot, abs);
  return rel === '' ? '.' : rel.split(sep).join('/');
}

async function exists(path: string): Promise<boolean> {
  try {
    await lstat(path);
    return true;
  } catch {
    return false;
  }
}

/** Realpath of the deepest existing ancestor of `abs` (or of `abs` itself), checked to be inside. */
async function checkDeepestExisting(realRoot: string, abs: string, input: string): Promise<void> {
  let current = abs;
  while (!(await exists(current))) {
    const parent = dirname(current);
    if (parent === current) break;
    current = parent;
  }
  const real = await realpath(current);
  if (!isInside(realRoot, real)) throw protocolError('path_escape', `path ${input} leaves the workspace through a symlink`);
}

type ConfineMode = 'read' | 'write';

export interface ConfinedPath {
  /** Absolute path to operate on. */
  readonly abs: string;
  /** `/`-separated path relative to the workspace root. */
  readonly rel: string;
}

/**
 * Confines `input` to the workspace.
 * - `read`: follows symlinks; the fully resolved target must be inside (a missing target is fine,
 *   the caller then gets ENOENT).
 * - `write` (also used for deletes and mkdir): the final component is not followed; its parent chain
 *   must resolve inside. The root itself is returned as is; callers refuse to replace or delete it.
 */
export async function confine(realRoot: string, declaredRoot: string, input: string, mode: ConfineMode): Promise<ConfinedPath> {
  const abs = lexicalResolve(realRoot, declaredRoot, input);
  if (mode === 'read') {
    if (await exists(abs)) {
      let real: string;
      try {
        real = await realpath(abs);
      } catch {
        // A dangling symlink: judge it by where its parent resolves.
        await checkDeepestExisting(realRoot, dirname(abs), input);
        return { abs, rel: workspaceRelative(realRoot, abs) };
      }
      if (!isInside(realRoot, real)) throw protocolError('path_escape', `path ${input} leaves the workspace through a symlink`);
      return { abs: real, rel: workspaceRelative(realRoot, abs) };
    }
    await checkDeepestExisting(realRoot, abs, input);
    return { abs, rel: workspaceRelative(realRoot, abs) };
  }
  if (abs !== realRoot) await checkDeepestExisting(realRoot, dirname(abs), input);
  return { abs, rel: workspaceRelative(realRoot, abs) };
}
