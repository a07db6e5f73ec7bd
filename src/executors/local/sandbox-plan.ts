/**
 * Building one session's sandbox plan from the executor's settings: real paths only (bwrap mounts
 * on what the kernel resolves), absent paths dropped, and the session's private home created. The
 * plan itself is turned into bwrap options by sandbox.ts.
 * @module
 */
import { accessSync, constants, existsSync, lstatSync, mkdirSync, realpathSync, statSync, unlinkSync } from 'node:fs';
import { delimiter, isAbsolute, join, normalize, relative, sep } from 'node:path';
import { codeCachePath } from '../../agentctl/code-cache.js';
import { agentctlStartCommand } from './agentctl-process.js';
import { FILES } from './constants.js';
import { mirrorInPrivateHome } from './sandbox-paths.js';
import type { BindAt, LaunchSandbox, SandboxPlan } from './sandbox.js';

interface SessionPaths {
  sessionDir: string;
  workspacePath: string;
  agentctlPath: string;
}

export interface BuiltSandboxPlan {
  plan: SandboxPlan;
  /** The session's private home (real path): `HOME` of agentctl and every process it starts. */
  privateHome: string;
}

/**
 * Every file the agentctl start command reads: node, the loader and the bundle it names, and the
 * bundle's code cache. All must be bound: an install under /tmp would otherwise sit below the
 * sandbox's private /tmp (the loader missing there made every launch fail with MODULE_NOT_FOUND).
 */
function agentctlStartFiles(agentctlPath: string): string[] {
  const command = agentctlStartCommand(agentctlPath);
  const cache = codeCachePath(agentctlPath);
  return command.length > 2 && existsSync(cache) ? [...command, cache] : command;
}

/**
 * Where a command named without a `/` is found on `path` (the first executable file), or null. An
 * agent's program installed in the user's home (`~/.local/bin/claude`) is kept visible through this:
 * the home itself is hidden in the sandbox.
 */
export function findOnPath(command: string, path: string | undefined): string | null {
  if (command === '' || command.includes('/')) return null;
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const file = join(dir, command);
    try {
      accessSync(file, constants.X_OK);
      if (statSync(file).isFile()) return file;
    } catch {
      // not here
    }
  }
  return null;
}

function realIfExists(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

const isInside = (path: string, dir: string): boolean => path === dir || path.startsWith(dir.endsWith(sep) ? dir : `${dir}${sep}`);

/**
 * The mount point of an exposed path in the private home, made safe: null when a directory on the
 * way is a symlink (the agent could point it anywhere) or the place holds another kind of file; a
 * symlink left at the place itself is removed.
 */
function mirrorPlace(dest: string, privateHome: string, sourceIsDir: boolean): string | null {
  const parts = relative(privateHome, dest).split(sep);
  let at = privateHome;
  for (const part of parts.slice(0, -1)) {
    at = join(at, part);
    try {
      if (!lstatSync(at).isDirectory()) return null;
    } catch {
      return dest; // bwrap creates the rest
    }
  }
  try {
    const st = lstatSync(dest);
    if (st.isSymbolicLink()) unlinkSync(dest);
    else if (st.isDirectory() !== sourceIsDir) return null;
  } catch {
    // absent: bwrap creates the mount point
  }
  return dest;
}

/**
 * The plan of one session: its workspace, agentctl state dir and private home (`<session>/home`,
 * created 0700 here and kept with the session until `rm`) writable; the hidden paths that exist
 * hidden (directories by a tmpfs, files by /dev/null); the agentctl start files, node, agent
 * commands and exposed paths read-only — an exposed path inside the user's home also at its place
 * in the private home, so tools find it through `$HOME`.
 */
export function buildSandboxPlan(sb: Extract<LaunchSandbox, { kind: 'bubblewrap' }>, session: SessionPaths): BuiltSandboxPlan {
  const stateDir = join(session.sessionDir, FILES.agentctlState);
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const homeDir = join(session.sessionDir, FILES.home);
  mkdirSync(homeDir, { recursive: true, mode: 0o700 });
  const privateHome = realpathSync(homeDir);
  const workspace = realpathSync(session.workspacePath);
  const writable = [workspace, realpathSync(stateDir), privateHome];

  const readOnly: string[] = [];
  const readOnlyAt: BindAt[] = [];
  const keepVisible = (path: string): string | null => {
    const real = realIfExists(path);
    if (real === null) return null;
    readOnly.push(real);
    // a path reached through a symlink is also bound where the command names it (that symlink may
    // lie in a hidden or private place)
    const literal = normalize(path);
    if (literal !== real) readOnlyAt.push({ source: real, dest: literal });
    return real;
  };
  for (const path of [...agentctlStartFiles(session.agentctlPath), ...sb.readOnly]) keepVisible(path);
  for (const path of sb.expose) {
    const real = keepVisible(path);
    if (real === null) continue;
    const mirror = mirrorInPrivateHome(normalize(path), sb.homes, privateHome);
    const place = mirror === null ? null : mirrorPlace(mirror, privateHome, statSync(real).isDirectory());
    if (place !== null) readOnlyAt.push({ source: real, dest: place });
  }

  const binds = [...writable, ...readOnly, ...readOnlyAt.map((b) => b.dest)];
  const hideDirs: string[] = [];
  const hideFiles: string[] = [];
  const hidden = [...new Set(sb.hide.map(realIfExists).filter((p): p is string => p !== null && p !== '/'))];
  for (const path of hidden) {
    // already invisible under a hidden directory, unless something on the way is bound back
    const coveredBy = hidden.find((d) => d !== path && isInside(path, d));
    if (coveredBy !== undefined && !binds.some((b) => isInside(path, b) && isInside(b, coveredBy))) continue;
    (statSync(path).isDirectory() ? hideDirs : hideFiles).push(path);
  }
  return {
    plan: { hide: hideDirs, hideFiles, writable, readOnly, readOnlyAt, network: sb.network, cwd: workspace },
    privateHome,
  };
}
