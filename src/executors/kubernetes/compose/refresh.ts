/**
 * The claim of a repository pool's member (its workspace already a clone of the repository): a
 * fetch and a checkout instead of a clone. The branch asked for is checked out at the origin's
 * tip (`checkout -B`), or without one the member's branch is reset to its origin's; the setup
 * script, which ran when the member was made, runs again only when the fetch moved the checkout.
 * The clone credential, if the launch has one, is used for the fetch and removed after it.
 * @module
 */
import { ComposeFieldError } from './errors.js';
import { credentialScope } from './git-credentials.js';
import { bootstrapPaths, type BootstrapPaths } from './paths.js';
import { shQuote } from './shell.js';

interface RefreshInput {
  /** The branch the session asks for; null: the member's own. */
  branch: string | null;
  /** The clone URL whose credential was uploaded, or null (none). */
  credentialsUrl: string | null;
  setupScript: string;
  paths?: BootstrapPaths;
}

/** The script, run by the claim's exec under the Pod's environment files (HOME is the private one). */
export function refreshScript(input: RefreshInput): string {
  const p = input.paths ?? bootstrapPaths();
  const q = shQuote;
  const { branch } = input;
  if (branch !== null && (branch === '' || branch.startsWith('-') || /[\s\0]/.test(branch))) throw new ComposeFieldError('repository.branch', 'must be a branch name');
  const helper = input.credentialsUrl === null ? '' : ` -c credential.helper= -c ${q(`credential.${credentialScope(input.credentialsUrl)}.helper=${p.gitCredentialHelper}`)}`;
  const lines = [
    'set -eu',
    `ws=${q(p.workspace)}`,
    'export GIT_TERMINAL_PROMPT=0',
    'fail() { echo "berth prepare: $*" >&2; exit 1; }',
    "git config --global safe.directory '*'",
    '[ -e "$ws/.git" ] || fail "the pool member has no clone in $ws"',
    'cd "$ws"',
    'before=$(git rev-parse HEAD)',
    `git${helper} fetch -q --prune origin || fail "fetching the repository failed"`,
    `rm -f ${q(p.gitCredentials)}`,
    branch === null
      ? 'cur=$(git symbolic-ref -q --short HEAD) || fail "the member clone is on no branch"; git reset -q --hard "origin/$cur"'
      : `git checkout -q -B ${q(branch)} ${q(`origin/${branch}`)} || fail ${q(`no branch ${branch} in the repository`)}`,
    'after=$(git rev-parse HEAD)',
    'echo "berth prepare: refreshed the pool clone at $after"',
  ];
  if (input.setupScript.trim() !== '') {
    lines.push('if [ "$before" != "$after" ]; then', '  echo "berth prepare: the checkout moved: running the setup script again"', `  sh -e -c ${q(input.setupScript)}`, 'fi');
  }
  lines.push('');
  return lines.join('\n');
}

/** The scheduled fetch of a ready member's clone (refs only: a claim checks out what it needs). */
export function memberFetchScript(paths: BootstrapPaths = bootstrapPaths()): string {
  const q = shQuote;
  return ['set -eu', 'set -a', `. ${q(paths.runtimeEnv)}`, `. ${q(paths.authEnv)}`, 'set +a', 'export GIT_TERMINAL_PROMPT=0', `cd ${q(paths.workspace)}`, 'git fetch -q --prune origin', ''].join('\n');
}
