/**
 * The standard bootstrap of a session Pod as upload plans: what goes where, with which mode, in
 * which order. One exec normally; a local-path repository's git bundle (large, of a size only
 * known at launch) goes first in an exec of its own, since only one file per exec can be read to EOF.
 * @module
 */
import type { RepositoryCredentials } from '../../executor.js';
import { authEnv, nonceFileContent, runtimeEnv, serializeEnvFile, type AgentctlFlavor } from './env-file.js';
import { gitCredentialFile, gitCredentialHelperScript } from './git-credentials.js';
import type { ResourceIdentity } from './identity.js';
import { bootstrapPaths, type BootstrapPaths } from './paths.js';
import { shQuote } from './shell.js';
import { prepareLines } from './start-script.js';
import type { UploadFile, UploadPlan } from './upload.js';

/**
 * The line the bootstrap exec prints on stdout right after it wrote the start marker: agentctl is
 * starting, so the controller can open its forward and hand over the nonce while prepare.sh (the
 * clone) still runs in the same exec.
 */
export const AGENTCTL_STARTING_LINE = 'berth: start marker written';

/**
 * A stdout listener that calls `onSeen` once, when `line` has appeared (a chunk boundary may split
 * it; only the last `line.length - 1` bytes of each chunk are kept between chunks).
 */
export function lineWatcher(line: string, onSeen: () => void): (chunk: Uint8Array) => void {
  const needle = Buffer.from(`${line}\n`, 'utf8');
  let carry = Buffer.alloc(0);
  let seen = false;
  return (chunk) => {
    if (seen) return;
    const text = Buffer.concat([carry, chunk]);
    if (text.includes(needle)) {
      seen = true;
      carry = Buffer.alloc(0);
      onSeen();
      return;
    }
    carry = Buffer.from(text.subarray(Math.max(0, text.length - (needle.length - 1))));
  };
}

/** Exit status of the bootstrap exec when it ran prepare.sh (`waitForPrepare`) and that failed; the log tail is on stderr. */
export const EXIT_UPLOAD_PREPARE_FAILED = 75;

interface BootstrapInput {
  identity: ResourceIdentity;
  flavor: AgentctlFlavor;
  /** agentctl's one-shot nonce (a fresh one per Pod), written to its own file, which agentctl removes. */
  bootstrapNonce: string;
  /** prepare.sh, from {@link prepareScript}. */
  prepareScript: string;
  /** The https clone credential, when the repository URL needs one. */
  repositoryCredentials?: RepositoryCredentials | null;
  /** A local-path repository as a git bundle (`git bundle create - --branches --tags HEAD`). */
  repoBundle?: Uint8Array | null;
  /**
   * The agentctl build, written last (read to EOF): a file with its own path and mode, or just the
   * bytes (then `agentctl.cjs` 0755 for flavor `bundle`, `agentctl` 0755 for `sea`).
   */
  agentctl: UploadFile | Uint8Array;
  /** More files before agentctl (its launcher, the SEA's libraries), each under /opt/berth or /run/berth. */
  extraFiles?: readonly UploadFile[];
  /** Env names the Pod template sets on the main container: agentctl passes them on to workspace processes. */
  passEnv?: readonly string[];
  /**
   * Run prepare.sh (clone, setup script) inside the bootstrap exec, right after the start marker,
   * so agentctl starts up while the clone runs: the exec then ends when the workspace is ready, and
   * a failure comes back at once as exit status {@link EXIT_UPLOAD_PREPARE_FAILED} with the log's
   * tail on stderr. The exec first writes the `prepare.exec` marker, so the start command leaves
   * prepare.sh to it. (agentctl touches the workspace only when its instance is created, which may
   * happen during the clone: it then only makes its own state directory under `.agentctl`, and
   * prepare.sh never touches `.agentctl`'s entries but its own; the agent starts after the exec.)
   * @default false
   */
  waitForPrepare?: boolean;
  paths?: BootstrapPaths;
}

/** The upload plans, in exec order. The last one writes the start marker. */
export function bootstrapPlans(input: BootstrapInput): UploadPlan[] {
  const p = input.paths ?? bootstrapPaths();
  const roots = [p.runtimeDir, p.authDir];
  const text = (s: string): Uint8Array => Buffer.from(s, 'utf8');
  const files: UploadFile[] = [
    { path: p.runtimeEnv, mode: 0o600, data: text(serializeEnvFile(runtimeEnv(input.identity, input.flavor, p, input.passEnv ?? []))) },
    { path: p.authEnv, mode: 0o600, data: text(serializeEnvFile(authEnv(p))) },
    { path: p.nonceFile, mode: 0o600, data: text(nonceFileContent(input.bootstrapNonce)) },
    { path: p.prepareScript, mode: 0o700, data: text(input.prepareScript) },
  ];
  if (input.repositoryCredentials) {
    files.push({ path: p.gitCredentialHelper, mode: 0o700, data: text(gitCredentialHelperScript(p)) });
    files.push({ path: p.gitCredentials, mode: 0o600, data: text(gitCredentialFile(input.repositoryCredentials)) });
  }
  files.push(...(input.extraFiles ?? []));
  if (input.waitForPrepare === true) files.push({ path: p.prepareInExecMarker, mode: 0o600, data: new Uint8Array() });
  const agentctl: UploadFile =
    input.agentctl instanceof Uint8Array ? { path: input.flavor === 'bundle' ? p.agentctlBundle : p.agentctl, mode: 0o755, data: input.agentctl } : input.agentctl;
  // After the marker: the line that starts the controller's connect, then prepare.sh (the clone)
  // while agentctl boots. (Starting the clone before agentctl's files arrived was measured slower
  // on the 2-core test cluster: it competes with the upload and agentctl's start for the CPU.)
  const main: UploadPlan = {
    roots,
    directories: [{ path: p.home, mode: 0o700 }],
    files,
    tail: agentctl,
    marker: p.startMarker,
    afterMarker: [`echo ${shQuote(AGENTCTL_STARTING_LINE)}`, ...(input.waitForPrepare === true ? prepareLines(p, EXIT_UPLOAD_PREPARE_FAILED, 40, { stepsToStdout: true }) : [])],
  };
  if (!input.repoBundle) return [main];
  return [{ roots, files: [], tail: { path: p.repoBundle, mode: 0o600, data: input.repoBundle } }, main];
}
