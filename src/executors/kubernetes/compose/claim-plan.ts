/**
 * The repository of a claimed warm pool member, as upload plans: the member's bootstrap ran
 * prepare.sh with no source, so the claim's clone (or a local path's bundle) comes as a prepare
 * script of its own (`claim-prepare.sh`: the upload never overwrites a file) with the clone
 * credential, run at once under the Pod's environment files. A failure exits
 * {@link EXIT_UPLOAD_PREPARE_FAILED} with the log's tail on stderr, as a cold launch's bootstrap does.
 * @module
 */
import type { RepositoryCredentials } from '../../executor.js';
import { EXIT_UPLOAD_PREPARE_FAILED } from './bootstrap-plan.js';
import { gitCredentialFile, gitCredentialHelperScript } from './git-credentials.js';
import { bootstrapPaths, type BootstrapPaths } from './paths.js';
import { shQuote } from './shell.js';
import type { UploadFile, UploadPlan } from './upload.js';

interface ClaimPrepareInput {
  /** prepare.sh for the claim's repository, from prepareScript(). */
  prepareScript: string;
  repositoryCredentials?: RepositoryCredentials | null;
  /** A local-path repository as a git bundle. */
  repoBundle?: Uint8Array | null;
  paths?: BootstrapPaths;
}

/** The claim's own prepare script and log, beside the member's. */
function claimPaths(p: BootstrapPaths): { script: string; log: string } {
  return { script: `${p.runtimeDir}/claim-prepare.sh`, log: `${p.runtimeDir}/claim-prepare.log` };
}

/** The plans, in exec order (a bundle first, in its own exec: one file per exec is read to EOF). */
export function claimPreparePlans(input: ClaimPrepareInput): UploadPlan[] {
  const p = input.paths ?? bootstrapPaths();
  const q = shQuote;
  const own = claimPaths(p);
  const roots = [p.runtimeDir, p.authDir];
  const text = (s: string): Uint8Array => Buffer.from(s, 'utf8');
  const files: UploadFile[] = [];
  if (input.repositoryCredentials) {
    files.push({ path: p.gitCredentialHelper, mode: 0o700, data: text(gitCredentialHelperScript(p)) });
    files.push({ path: p.gitCredentials, mode: 0o600, data: text(gitCredentialFile(input.repositoryCredentials)) });
  }
  const main: UploadPlan = {
    roots,
    files,
    tail: { path: own.script, mode: 0o700, data: text(input.prepareScript) },
    finalStep: [
      'set -a',
      `. ${q(p.runtimeEnv)}`,
      `. ${q(p.authEnv)}`,
      'set +a',
      `if sh ${q(own.script)} 3>&1 >${q(own.log)} 2>&1 </dev/null; then :; else`,
      '  status=$?',
      `  echo "berth: preparing the claimed workspace failed with exit status $status:" >&2`,
      `  tail -n 40 ${q(own.log)} >&2 || :`,
      `  exit ${EXIT_UPLOAD_PREPARE_FAILED}`,
      'fi',
    ],
  };
  if (!input.repoBundle) return [main];
  return [{ roots, files: [], tail: { path: p.repoBundle, mode: 0o600, data: input.repoBundle } }, main];
}
