/**
 * The in-Pod paths the bootstrap scripts use, derived from the three volume roots. Production uses
 * {@link PATH}; tests pass temporary roots so the same scripts run for real on the host.
 * @module
 */
import { AGENTCTL_STATE_DIR, PATH } from '../constants.js';

/** The three volume mount points. */
interface BootstrapRoots {
  /** Runtime emptyDir. @default /opt/berth */
  runtimeDir: string;
  /** Memory-backed emptyDir. @default /run/berth */
  authDir: string;
  /** Workspace volume. @default /workspace */
  workspace: string;
}

export interface BootstrapPaths extends BootstrapRoots {
  agentctl: string;
  agentctlBundle: string;
  agentctlLauncher: string;
  /** The plan of the Node pre-start (prestart.ts), written by a bundle delivery only: beside the launcher, `.json`. */
  agentctlPrestart: string;
  runtimeEnv: string;
  authEnv: string;
  nonceFile: string;
  prepareScript: string;
  prepareLog: string;
  prepareFailed: string;
  startMarker: string;
  preparedMarker: string;
  prepareInExecMarker: string;
  home: string;
  repoBundle: string;
  gitCredentialHelper: string;
  gitCredentials: string;
  agentctlStateDir: string;
}

const DEFAULT_ROOTS: Readonly<BootstrapRoots> = Object.freeze({
  runtimeDir: PATH.runtimeDir,
  authDir: PATH.authDir,
  workspace: PATH.workspace,
});

function rebase(path: string, from: string, to: string): string {
  if (path !== from && !path.startsWith(`${from}/`)) throw new Error(`${path} is not under ${from}`);
  return to + path.slice(from.length);
}

/** Every path of {@link PATH} moved under the given roots (identity for {@link DEFAULT_ROOTS}). */
export function bootstrapPaths(roots: BootstrapRoots = DEFAULT_ROOTS): BootstrapPaths {
  for (const [key, value] of Object.entries(roots)) {
    if (!value.startsWith('/') || value.length < 2 || value.endsWith('/')) throw new Error(`roots.${key} must be an absolute path without a trailing slash`);
  }
  const runtime = (p: string): string => rebase(p, PATH.runtimeDir, roots.runtimeDir);
  const auth = (p: string): string => rebase(p, PATH.authDir, roots.authDir);
  return {
    ...roots,
    agentctl: runtime(PATH.agentctl),
    agentctlBundle: runtime(PATH.agentctlBundle),
    agentctlLauncher: runtime(PATH.agentctlLauncher),
    agentctlPrestart: `${runtime(PATH.agentctlLauncher)}.json`,
    runtimeEnv: runtime(PATH.runtimeEnv),
    prepareScript: runtime(PATH.prepareScript),
    prepareLog: runtime(PATH.prepareLog),
    prepareFailed: runtime(PATH.prepareFailed),
    startMarker: runtime(PATH.startMarker),
    preparedMarker: runtime(PATH.preparedMarker),
    prepareInExecMarker: runtime(PATH.prepareInExecMarker),
    repoBundle: runtime(PATH.repoBundle),
    gitCredentialHelper: runtime(PATH.gitCredentialHelper),
    authEnv: auth(PATH.authEnv),
    nonceFile: auth(PATH.nonceFile),
    home: auth(PATH.home),
    gitCredentials: auth(PATH.gitCredentials),
    agentctlStateDir: rebase(AGENTCTL_STATE_DIR, PATH.workspace, roots.workspace),
  };
}
