/**
 * The local executor's sandbox: each agentctl (and so the agent and every process it starts) runs
 * inside bubblewrap (`bwrap`). The workspace and agentctl's state dir are writable, the rest of the
 * file system is read-only, the data dir (secrets, inventory, other sessions' workspaces) is not
 * visible at all, nor are the user's home, /root, /run/secrets and the kubeconfigs (the agent gets
 * a private home of its own instead), `/tmp` is private, and the pid/ipc/uts (optionally net)
 * namespaces are private.
 * The argv is built by a pure function; `probeBubblewrap` runs one trial sandbox to learn whether
 * this machine can run it at all.
 * @module
 */
import { spawnSync } from 'node:child_process';

/** The `sandbox` setting of a local executor; `auto` (the default) is bubblewrap where it works. */
export type SandboxMode = 'auto' | 'bubblewrap' | 'none';

/**
 * How a launch confines agentctl: the sandbox settings, or why it runs unconfined. `hide` lists the
 * paths no agent may see (the user's home, /root, the data dir, kubeconfigs, `sandbox_hide` …;
 * absent ones are skipped), `readOnly` what must stay visible though it may lie in a hidden or
 * private place (the agentctl start files, node, agent commands), `expose` the `sandbox_expose`
 * paths, and `homes` the user's home directories (an exposed path inside one is also mounted at the
 * same place in the session's private home).
 */
export type LaunchSandbox =
  | {
      kind: 'bubblewrap';
      network: boolean;
      hide: readonly string[];
      readOnly: readonly string[];
      expose: readonly string[];
      homes: readonly string[];
    }
  | { kind: 'none'; warning: string | null };

/** A read-only bind of `source` at `dest` (both absolute and real). */
export interface BindAt {
  source: string;
  dest: string;
}

/** What one sandboxed agentctl may see and do. All paths absolute (and real: no symlinks). */
export interface SandboxPlan {
  /** Directories hidden entirely (a fresh empty tmpfs is mounted over each). */
  hide: readonly string[];
  /** Files hidden (`/dev/null` is bound over each: they read as nothing, or not at all). */
  hideFiles: readonly string[];
  /** Bound read-write at the same path (the workspace, agentctl's state dir, the private home). */
  writable: readonly string[];
  /** Bound read-only at the same path (the agentctl start files, node, agent commands, exposed paths). */
  readOnly: readonly string[];
  /** Bound read-only elsewhere (an exposed file of the user's home, at its place in the private home). */
  readOnlyAt: readonly BindAt[];
  /** Share the host network (agents call model APIs); `false` adds `--unshare-net` (loopback only). */
  network: boolean;
  /** Working directory inside the sandbox. */
  cwd: string;
}

/** The mounts every sandbox starts with; binding one of them (or `/`) again would undo it. */
const BASE = ['/', '/dev', '/proc', '/tmp'];

const depth = (path: string): number => (path === '/' ? 0 : path.split('/').length - 1);

type Mount = { kind: 'hide-dir' | 'hide-file' | 'bind' | 'ro-bind'; source: string; dest: string };

/**
 * The bwrap options (before `--` and the command) for `plan`. Later mounts cover earlier ones, so
 * after the base (`/` read-only, a fresh `/dev`, `/proc` and private `/tmp`) every mount is emitted
 * parents first: the most specific path wins. A workspace, the private home or the agentctl bundle
 * inside a hidden directory (the data dir defaults to ~/.local/share/berth) is bound after that
 * directory's tmpfs, and bwrap creates its mount point inside the tmpfs; a hidden path inside a bound
 * one (a kubeconfig in an exposed directory) is hidden again after the bind. A bind of exactly a
 * hidden path, of `/` or of a base mount is dropped: it would uncover what is hidden.
 *
 * Deliberately absent:
 * - `--die-with-parent`: it would also kill bwrap when *its* parent dies, and that parent is
 *   `berth serve` — sessions must survive a controller restart (that is why agentctl is detached).
 *   The pid namespace gives the semantics that matter instead: bwrap's init (pid 1 inside) exits
 *   when agentctl exits, and the kernel then kills every process left in the namespace, so the
 *   agent and anything it started die with their supervisor and none can escape by `setsid`.
 * - `--disable-userns`: agents may run their own nested sandboxes; mounts inherited by a nested
 *   namespace are locked, so they cannot uncover the hidden paths.
 *
 * `--cap-drop ALL` matters when Berth runs as root: bwrap keeps root's capabilities inside the
 * sandbox by default, and with CAP_SYS_ADMIN an agent could unmount the tmpfs that hides the data dir.
 * Run as root, the sandbox's processes are also not uid 0 inside (`--uid`/`--gid` {@link ROOT_MAPPED_ID}):
 * uid 0 without capabilities cannot write the uid map of a nested user namespace, so an agent's
 * own sandbox (Codex runs every command under bwrap) would fail. Host access is unchanged: they are
 * still host root without capabilities; host root's files show as owned by that id inside.
 */
/** The uid and gid the sandbox's processes have inside when Berth runs as root (see bwrapArgs). */
const ROOT_MAPPED_ID = 1000;

export function bwrapArgs(plan: SandboxPlan, hostUid: number = process.getuid?.() ?? -1): string[] {
  const args = ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--hostname', 'berth-sandbox'];
  if (hostUid === 0) args.push('--uid', String(ROOT_MAPPED_ID), '--gid', String(ROOT_MAPPED_ID));
  if (!plan.network) args.push('--unshare-net');
  args.push('--new-session', '--cap-drop', 'ALL');
  args.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
  const hidden = new Set([...plan.hide, ...plan.hideFiles]);
  const mounts: Mount[] = [
    ...plan.hide.map((p): Mount => ({ kind: 'hide-dir', source: p, dest: p })),
    ...plan.hideFiles.map((p): Mount => ({ kind: 'hide-file', source: '/dev/null', dest: p })),
    ...plan.writable.map((p): Mount => ({ kind: 'bind', source: p, dest: p })),
    ...plan.readOnly.map((p): Mount => ({ kind: 'ro-bind', source: p, dest: p })),
    ...plan.readOnlyAt.map((b): Mount => ({ kind: 'ro-bind', source: b.source, dest: b.dest })),
  ].filter((m) => !BASE.includes(m.dest) && (m.kind.startsWith('hide') || !hidden.has(m.dest)));
  const seen = new Set<string>();
  // stable: at one depth, hides keep their place before binds (they never share a path)
  for (const m of mounts.map((m, i) => ({ m, i })).sort((a, b) => depth(a.m.dest) - depth(b.m.dest) || a.i - b.i).map((x) => x.m)) {
    const key = `${m.kind} ${m.source} ${m.dest}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (m.kind === 'hide-dir') args.push('--tmpfs', m.dest);
    else if (m.kind === 'hide-file') args.push('--ro-bind', '/dev/null', m.dest);
    else args.push(m.kind === 'bind' ? '--bind' : '--ro-bind', m.source, m.dest);
  }
  args.push('--chdir', plan.cwd);
  return args;
}

/** Outcome of the one-time probe. */
type SandboxProbe = { ok: true; detail: string } | { ok: false; reason: string; fix: string };

const OPT_OUT = 'or opt out: executors.<name>.sandbox: none in berth.yaml (agents then run unconfined)';

let cached: SandboxProbe | undefined;

/**
 * Whether bubblewrap works here: `bwrap` on PATH and a trial sandbox with the namespaces the
 * executor uses (user namespaces may be disabled by sysctl, or forbidden inside a container).
 * Runs once per process; `fresh` re-runs it (doctor).
 */
export function probeBubblewrap(opts: { fresh?: boolean; bwrap?: string } = {}): SandboxProbe {
  if (cached !== undefined && opts.fresh !== true && opts.bwrap === undefined) return cached;
  const bwrap = opts.bwrap ?? 'bwrap';
  const version = spawnSync(bwrap, ['--version'], { encoding: 'utf8', timeout: 5000 });
  let result: SandboxProbe;
  if (version.error !== undefined || version.status !== 0) {
    result = { ok: false, reason: `${bwrap} (bubblewrap) is not installed`, fix: `install it (e.g. apt-get install bubblewrap), ${OPT_OUT}` };
  } else {
    const trial = spawnSync(
      bwrap,
      ['--unshare-user', '--unshare-pid', '--unshare-ipc', '--unshare-uts', '--cap-drop', 'ALL', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', '--', 'true'],
      { encoding: 'utf8', timeout: 10_000 },
    );
    if (trial.error !== undefined || trial.status !== 0) {
      const why = (trial.stderr || trial.error?.message || `exit ${trial.status}`).trim().split('\n')[0] ?? '';
      result = {
        ok: false,
        reason: `bubblewrap cannot create a sandbox here (${why})`,
        fix: `enable unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 / user.max_user_namespaces > 0; in a container allow them), ${OPT_OUT}`,
      };
    } else {
      result = { ok: true, detail: version.stdout.trim() };
    }
  }
  if (opts.bwrap === undefined) cached = result;
  return result;
}

/** Thrown when `sandbox: bubblewrap` is configured explicitly and cannot work on this machine. */
export class SandboxUnavailableError extends Error {
  override readonly name = 'SandboxUnavailableError';
  constructor(readonly reason: string, readonly fix: string) {
    super(`sandbox: ${reason}; fix: ${fix}`);
  }
}

/**
 * The sandbox a launch of this executor uses. `auto` falls back to none where bubblewrap cannot
 * work, and says so on every launch (the warning names why and how to fix or opt out); an explicit
 * `bubblewrap` that cannot work throws SandboxUnavailableError: a user who asked for confinement
 * never silently gets none.
 */
export function resolveLaunchSandbox(
  opts: { mode: SandboxMode } & Omit<Extract<LaunchSandbox, { kind: 'bubblewrap' }>, 'kind'>,
): LaunchSandbox {
  if (opts.mode === 'none') return { kind: 'none', warning: null };
  const probe = probeBubblewrap();
  if (probe.ok) return { kind: 'bubblewrap', network: opts.network, hide: opts.hide, readOnly: opts.readOnly, expose: opts.expose, homes: opts.homes };
  if (opts.mode === 'bubblewrap') throw new SandboxUnavailableError(probe.reason, probe.fix);
  return {
    kind: 'none',
    warning: `agentctl and the agent run WITHOUT a sandbox: ${probe.reason}. They can read every file this user can, including the data dir's secrets. Fix: ${probe.fix}`,
  };
}
