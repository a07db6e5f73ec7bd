/**
 * The workspace of a local session: `<dataDir>/workspaces/<sessionId>/repo`, a clone of the
 * repository. Local paths are cloned with `git clone --local` rather than `git worktree add`: the
 * clone is independent (removing it never touches the user's repository, no worktree metadata or
 * branch locks are left in it), and `--local` hard-links the objects, so it is as cheap as a worktree.
 * @module
 */
import { spawn } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { sanitize } from '../../shared/sanitize.js';
import type { RepositoryCredentials, RepositorySpec } from '../executor.js';
import { LaunchError } from '../launch-kit/index.js';
import { LAUNCH_CHILD_ENV, STAGE } from './constants.js';
import { findProcessesByEnv, isAlive, waitForExit } from './proc.js';

const CLONE_TIMEOUT_MS = 10 * 60_000;
/** After the deadline's SIGTERM, `timeout` sends SIGKILL this much later. */
const CLONE_KILL_AFTER_S = 10;
/** Output kept of a launch child (for its error message). */
const OUTPUT_CAP = 1024 * 1024;

/** Env var names the one-shot credential helper reads (set only in the env of that git child). */
const CRED_ENV = { username: 'BERTH_GIT_USERNAME', password: 'BERTH_GIT_PASSWORD' } as const;

/**
 * Git configuration, passed through `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n` (git
 * >= 2.31) so it is neither on argv nor written to the clone's `.git/config`: an empty
 * `credential.helper` first drops the user's helpers (a `store` helper would otherwise save the
 * credential on success), then a helper scoped to the clone URL answers `get` from the env vars
 * above and ignores `store`/`erase`. Scoping it to the URL keeps it from answering a redirect to
 * another host.
 */
export function credentialEnv(url: string, creds: RepositoryCredentials): Record<string, string> {
  const helper = `!f() { test "$1" = get || exit 0; printf 'username=%s\\npassword=%s\\n' "$${CRED_ENV.username}" "$${CRED_ENV.password}"; }; f`;
  return {
    GIT_CONFIG_COUNT: '2',
    GIT_CONFIG_KEY_0: 'credential.helper',
    GIT_CONFIG_VALUE_0: '',
    GIT_CONFIG_KEY_1: `credential.${credentialScope(url)}.helper`,
    GIT_CONFIG_VALUE_1: helper,
    [CRED_ENV.username]: creds.username,
    [CRED_ENV.password]: creds.password,
  };
}

/** `scheme://host[:port]` of the URL: git matches `credential.<url>.*` on scheme, host and port (a path would have to be a prefix). */
function credentialScope(url: string): string {
  const m = /^([a-z][a-z0-9+.-]*:\/\/[^/?#]*)/i.exec(url);
  return m?.[1] ?? url;
}

/**
 * Runs a launch child: `git` under coreutils `timeout`, in its own process group, marked with
 * `LAUNCH_CHILD_ENV=<owner>`. The deadline lives in `timeout` (not only in this process), so a
 * `kill -9` of the controller cannot leave a clone running for ever with the repository password
 * in its environment; the marker lets the rollback and the recovery of the next controller find
 * and kill the whole group (git's remote helpers included) before they report the launch undone.
 */
function git(
  args: string[],
  opts: { owner: string; cwd?: string; signal?: AbortSignal; env?: Record<string, string> },
): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn('timeout', ['--kill-after', `${CLONE_KILL_AFTER_S}s`, `${Math.ceil(CLONE_TIMEOUT_MS / 1000)}s`, 'git', ...args], {
      cwd: opts.cwd,
      // own process group: the rollback kills git and its remote helpers together
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
      // never prompt for credentials: a launch must fail, not hang
      env: { ...withoutGitConfigEnv(process.env), GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: 'echo', ...opts.env, [LAUNCH_CHILD_ENV]: opts.owner },
    });
    const out = { stdout: '', stderr: '' };
    const keep = (key: 'stdout' | 'stderr') => (chunk: Buffer) => {
      if (out[key].length < OUTPUT_CAP) out[key] += chunk.toString('utf8');
    };
    child.stdout.on('data', keep('stdout'));
    child.stderr.on('data', keep('stderr'));
    const killGroup = (): void => {
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // gone
      }
    };
    // the controller's own timer as well, in case `timeout` itself is stopped
    const timer = setTimeout(killGroup, CLONE_TIMEOUT_MS + (CLONE_KILL_AFTER_S + 5) * 1000);
    timer.unref();
    const onAbort = (): void => killGroup();
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.signal?.aborted) killGroup();
    const settle = (err: (Error & { code?: unknown }) | null): void => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (err) reject(Object.assign(err, { stderr: out.stderr }));
      else resolvePromise(out);
    };
    child.once('error', (err) => settle(err));
    child.once('close', (code, signal) => {
      if (code === 0) return settle(null);
      settle(Object.assign(new Error(`git ${args[0] ?? ''} failed (${signal !== null ? `signal ${signal}` : `exit code ${code}`})`), { code: code ?? signal }));
    });
  });
}

/** Checks the repository reference before anything is created; throws LaunchError(stage `workspace`). */
export function validateRepository(repo: RepositorySpec): { source: string; field: 'repository.url' | 'repository.path' } {
  const fail = (reason: string, message: string) => new LaunchError(STAGE.workspace, reason, message);
  if (repo.url !== undefined && repo.path !== undefined) throw fail('InvalidRepository', 'repository: cannot set both url and path');
  if (repo.path !== undefined) {
    const p = isAbsolute(repo.path) ? repo.path : resolve(repo.path);
    if (!existsSync(p)) throw fail('RepositoryNotFound', `repository.path: ${p} does not exist`);
    if (!statSync(p).isDirectory()) throw fail('RepositoryNotFound', `repository.path: ${p} is not a directory`);
    if (!existsSync(resolve(p, '.git')) && !existsSync(resolve(p, 'HEAD'))) {
      throw fail('NotAGitRepository', `repository.path: ${p} is not a git repository`);
    }
    return { source: p, field: 'repository.path' };
  }
  if (repo.url !== undefined) {
    if (repo.url.trim() === '') throw fail('InvalidRepository', 'repository.url: must not be empty');
    if (repo.url.startsWith('file://')) {
      const p = decodeURIComponent(new URL(repo.url).pathname);
      if (!existsSync(p)) throw fail('RepositoryNotFound', `repository.url: ${sanitize(repo.url)} does not exist`);
    }
    return { source: repo.url, field: 'repository.url' };
  }
  throw fail('InvalidRepository', 'repository: set url or path');
}

/** Our GIT_CONFIG_* entries must not be shifted or overridden by ones inherited from the controller's env. */
function withoutGitConfigEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) if (!/^GIT_CONFIG_(COUNT|KEY_\d+|VALUE_\d+)$/.test(k)) out[k] = v;
  return out;
}

/**
 * Clones the repository into `target` (which must not exist yet). `credentials` go to git through
 * {@link credentialEnv} only; the clone's origin is the URL as given (without credentials), and
 * the error text is scrubbed of the credential in case git ever echoes it.
 */
export async function cloneRepository(
  repo: RepositorySpec,
  target: string,
  owner: string,
  signal?: AbortSignal,
  credentials?: RepositoryCredentials,
): Promise<void> {
  const { source, field } = validateRepository(repo);
  const args = ['clone', '--quiet'];
  if (field === 'repository.path') args.push('--local');
  if (repo.branch !== undefined) args.push('--branch', repo.branch);
  args.push('--', source, target);
  try {
    const env = credentials && field === 'repository.url' ? credentialEnv(source, credentials) : undefined;
    await git(args, { owner, ...(signal ? { signal } : {}), ...(env ? { env } : {}) });
  } catch (err) {
    const stderr = scrub(String((err as { stderr?: unknown }).stderr ?? '').trim(), credentials);
    if ((err as { code?: unknown }).code === 124) {
      throw new LaunchError(STAGE.workspace, 'CloneTimedOut', `${field}: git clone of ${sanitize(source)} did not finish within ${CLONE_TIMEOUT_MS / 1000} s`, { cause: err });
    }
    const branchMissing = repo.branch !== undefined && /Remote branch .* not found/.test(stderr);
    throw new LaunchError(
      STAGE.workspace,
      branchMissing ? 'BranchNotFound' : 'CloneFailed',
      branchMissing
        ? `repository.branch: ${repo.branch} does not exist in ${sanitize(source)}`
        : `${field}: git clone of ${sanitize(source)} failed: ${sanitize(lastLines(stderr) || scrub((err as Error).message, credentials))}${authHint(stderr, credentials)}`,
      { cause: err },
    );
  }
}

/**
 * Kills every launch child marked with `owner` (its whole process group) and waits for them to be
 * gone. Throws when one survives: the caller must not report the launch undone (nor remove the
 * workspace under a clone still writing into it).
 */
export async function killLaunchChildren(owner: string, timeoutMs = 5000): Promise<number> {
  const pids = findProcessesByEnv(LAUNCH_CHILD_ENV, owner);
  for (const pid of pids) {
    for (const target of [-pid, pid]) {
      try {
        process.kill(target, 'SIGKILL');
      } catch {
        // not a group leader, or gone
      }
    }
  }
  const deadline = Date.now() + timeoutMs;
  for (const pid of pids) await waitForExit(pid, Math.max(0, deadline - Date.now()));
  const left = findProcessesByEnv(LAUNCH_CHILD_ENV, owner).filter(isAlive);
  if (left.length > 0) throw new Error(`launch children still running after SIGKILL: pid ${left.join(', ')}`);
  return pids.length;
}

/** Removes a session dir (idempotent). */
export async function removeSessionDir(sessionDir: string): Promise<void> {
  await rm(sessionDir, { recursive: true, force: true, maxRetries: 3 });
}

/** Removes the credential (raw and percent-encoded) from text; sanitize() then handles the generic patterns. */
function scrub(text: string, credentials: RepositoryCredentials | undefined): string {
  if (!credentials) return text;
  let out = text;
  // a token given as the user name is the secret; a user name next to a password is only a login
  const secrets = credentials.password === '' ? [credentials.username] : [credentials.password];
  for (const value of secrets) {
    if (value.length < 4) continue; // too short to scrub without mangling unrelated text; never a real token
    for (const form of new Set([value, encodeURIComponent(value)])) out = out.split(form).join('***');
  }
  return out;
}

function authHint(stderr: string, credentials: RepositoryCredentials | undefined): string {
  if (!/Authentication failed|could not read (Username|Password)|401|403/i.test(stderr)) return '';
  return credentials ? ' (check the credentials in the repository URL)' : ' (the repository needs credentials: give them in the URL, e.g. https://user:TOKEN@host/repo.git)';
}

function lastLines(text: string): string {
  return text.split('\n').filter((l) => l.trim() !== '').slice(-3).join(' | ');
}
