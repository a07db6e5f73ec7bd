/**
 * prepare.sh (spec §5.7, adapted): makes /workspace a checkout of the session's repository once,
 * then runs the profile's setup script. Idempotent, so a retained PVC or a restarted container
 * keeps the agent's work: an existing checkout is kept, a non-empty workspace that is not a
 * checkout is refused with a clear message, an interrupted clone is discarded and redone.
 * @module
 */
import { ComposeFieldError } from './errors.js';
import { credentialScope } from './git-credentials.js';
import { bootstrapPaths, type BootstrapPaths } from './paths.js';
import { shQuote } from './shell.js';

/** Where the repository comes from. */
export type RepositorySource =
  | { kind: 'none' }
  /** A URL the Pod can reach (https, git, file inside the Pod). `credentials`: a credential file is uploaded. */
  | { kind: 'url'; url: string; branch?: string | null; credentials?: boolean }
  /**
   * A local-path repository streamed in as a git bundle ({@link BootstrapPaths.repoBundle}).
   * `originUrl` becomes the clone's origin (e.g. the path on the user's machine); null removes it.
   */
  | { kind: 'bundle'; branch?: string | null; originUrl?: string | null };

export interface PrepareInput {
  source: RepositorySource;
  /** The profile's `setup_script`; runs in /workspace under `sh -e` right after the clone. */
  setupScript: string;
  paths?: BootstrapPaths;
  /**
   * In-Pod limits (seconds) of the clone and the setup script, enforced with `timeout` where the
   * image has one: a backstop for when the controller, which enforces the budgets itself, is gone.
   */
  limits?: { cloneSeconds: number; setupScriptSeconds: number };
}

/**
 * What prepare.sh prints on file descriptor 3 as each step starts (`berth: step clone`,
 * `berth: step setup_script`); the bootstrap exec passes it to the controller as its stdout.
 */
export const PREPARE_STEP_PREFIX = 'berth: step ';

/** Exit statuses of a command ended by `timeout` (GNU: 124; busybox: the signal's 128+N). */
const TIMED_OUT_STATUSES = '124|137|143';

/** Builds prepare.sh. Every data value is single-quoted. */
export function prepareScript(input: PrepareInput): string {
  const p = input.paths ?? bootstrapPaths();
  const q = shQuote;
  const { source } = input;
  const branch = source.kind === 'none' ? null : (source.branch ?? null);
  if (branch !== null && (branch === '' || branch.startsWith('-') || /[\s\0]/.test(branch))) {
    throw new ComposeFieldError('repository.branch', 'must be a branch name');
  }
  const lines: string[] = [
    'set -eu',
    `ws=${q(p.workspace)}`,
    'state="$ws/.agentctl"',
    'pending="$state/berth-setup-pending"',
    'incomplete="$state/berth-clone-incomplete"',
    'clone_tmp="$state/berth-clone"',
    'export GIT_TERMINAL_PROMPT=0',
    'fail() { echo "berth prepare: $*" >&2; exit 1; }',
    // fd 3 is the bootstrap exec's stdout (see prepareLines); without one the line goes nowhere
    `step() { { echo "${PREPARE_STEP_PREFIX}$1" >&3; } 2>/dev/null || :; }`,
    // `timeout SECS CMD` works in GNU coreutils and busybox alike; an image without it runs unlimited
    'lim=',
    'if command -v timeout >/dev/null 2>&1 && timeout 5 true >/dev/null 2>&1; then lim=1; fi',
    'limited() { secs=$1; shift; if [ -n "$lim" ]; then timeout "$secs" "$@"; else "$@"; fi; }',
    `over() { case "$1" in ${TIMED_OUT_STATUSES}) [ -z "$lim" ] || fail "$2 did not finish within $3 s";; esac; exit "$1"; }`,
    // Entries of the workspace other than lost+found (a fresh ext4 volume) and agentctl's state.
    'each_entry() { for e in "$1"/* "$1"/.[!.]* "$1"/..?*; do if [ -e "$e" ] || [ -L "$e" ]; then case "${e##*/}" in lost+found|.agentctl) ;; *) "$2" "$e" || return 1 ;; esac; fi; done; }',
    'not_empty() { return 1; }',
    'remove() { rm -rf "$1"; }',
    'has_git() { command -v git >/dev/null 2>&1; }',
    // HOME is the private, memory-backed one from auth.env; a retained PVC may be owned by another uid.
    "if has_git; then git config --global safe.directory '*'; fi",
    'mkdir -p "$ws" "$state"',
    `[ -f "$state/.gitignore" ] || printf '%s\\n' '# agentctl state, not workspace content' '*' >"$state/.gitignore"`,
    'if [ -e "$incomplete" ]; then echo "berth prepare: discarding an interrupted clone"; each_entry "$ws" remove; rm -rf "$clone_tmp"; rm -f "$incomplete"; fi',
    'if [ -e "$ws/.git" ]; then',
    '  has_git || fail "git is not installed in the image"',
    '  top=$(git -C "$ws" rev-parse --show-toplevel 2>/dev/null) || fail "$ws has a .git but is not a valid checkout"',
    '  [ "$top" = "$(cd "$ws" && pwd -P)" ] || fail "the retained workspace repository root $top does not match the mount root $ws"',
    '  echo "berth prepare: keeping the existing checkout in $ws"',
  ];
  if (source.kind === 'none') {
    lines.push(
      'elif [ ! -e "$state/berth-initialized" ]; then',
      '  : >"$pending"',
      '  : >"$state/berth-initialized"',
    );
  } else {
    lines.push(
      'else',
      '  if ! each_entry "$ws" not_empty; then fail "$ws is not empty but is not a git checkout; refusing to clone over its files (empty it or use a fresh workspace)"; fi',
      '  has_git || fail "git is not installed in the image; it is needed to clone the repository"',
      '  : >"$incomplete"',
      '  rm -rf "$clone_tmp"',
      '  step clone',
      ...cloneLines(source, branch, p, input.limits?.cloneSeconds),
      // The setup-pending marker exists before .git appears: a failed setup is retried, not skipped.
      '  : >"$pending"',
      '  move() { [ "${1##*/}" = .git ] || mv -f "$1" "$ws/"; }',
      '  each_entry "$clone_tmp" move',
      // .git last, in one rename: a checkout with a .git is a complete one.
      '  mv "$clone_tmp/.git" "$ws/.git"',
      '  rmdir "$clone_tmp"',
      '  rm -f "$incomplete"',
      '  echo "berth prepare: cloned into $ws"',
    );
  }
  lines.push('fi');
  // Whether cloned now or kept: the agent, started after prepare, must not find the credential.
  // (A failed clone exits above and keeps both for the retry.)
  lines.push(`rm -f ${q(p.gitCredentials)} ${q(p.repoBundle)}`);
  lines.push('if [ -e "$pending" ]; then');
  if (input.setupScript.trim() !== '') {
    const secs = input.limits?.setupScriptSeconds;
    const run = secs === undefined ? `sh -e -c ${q(input.setupScript)}` : `limited ${secs} sh -e -c ${q(input.setupScript)}`;
    lines.push('  echo "berth prepare: running the setup script"', '  step setup_script', `  (cd "$ws" && ${run}) || over $? setup_script ${secs ?? 0}`);
  }
  lines.push('  rm -f "$pending"', 'fi', '');
  return lines.join('\n');
}

function cloneLines(source: Exclude<RepositorySource, { kind: 'none' }>, branch: string | null, p: BootstrapPaths, secs: number | undefined): string[] {
  const q = shQuote;
  const branchArg = branch === null ? '' : ` --branch ${q(branch)}`;
  const limit = secs === undefined ? '' : `limited ${secs} `;
  const over = secs === undefined ? '' : ` || over $? clone ${secs}`;
  if (source.kind === 'bundle') {
    return [
      `  [ -f ${q(p.repoBundle)} ] || fail "the repository bundle was not uploaded"`,
      `  ${limit}git clone -q${branchArg} -- ${q(p.repoBundle)} "$clone_tmp"${over}`,
      source.originUrl ? `  git -C "$clone_tmp" remote set-url origin ${q(source.originUrl)}` : '  git -C "$clone_tmp" remote remove origin',
    ];
  }
  if (source.url === '' || source.url.startsWith('-')) throw new ComposeFieldError('repository.url', 'must be a clone URL');
  let helper = '';
  if (source.credentials === true) {
    // `credential.helper=` (empty) first drops helpers from the image's system config, so no
    // `store` helper can save the credential; the scoped helper then answers for this server only.
    helper = ` -c credential.helper= -c ${q(`credential.${credentialScope(source.url)}.helper=${p.gitCredentialHelper}`)}`;
  } else if (/^[a-z][a-z0-9+.-]*:\/\/[^/]*@/i.test(source.url) && !source.url.startsWith('ssh://')) {
    throw new ComposeFieldError('repository.url', 'must not carry credentials (they are passed separately)');
  }
  return [`  ${limit}git${helper} clone -q${branchArg} -- ${q(source.url)} "$clone_tmp"${over}`];
}
