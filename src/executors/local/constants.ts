/**
 * Names of the local executor: stages, checkpoint states, metadata keys, files under the data dir.
 * @module
 */

/** Launch stages, in order. */
export const STAGE = {
  workspace: 'workspace',
  agentctlStart: 'agentctl_start',
  agentctlConnect: 'agentctl_connect',
} as const;

/** Provisional checkpoint states (spec §4.1 style); `ready` is written by the manager. */
export const CHECKPOINT = {
  workspaceCreated: 'workspace_created',
  agentctlStarted: 'agentctl_started',
  agentctlConnected: 'agentctl_connected',
} as const;

/** Runtime metadata keys (all persistable: the `local_` prefix passes the inventory filter). */
export const META = {
  /** `<dataDir>/workspaces/<sessionId>`: everything the session owns. */
  sessionDir: 'local_session_dir',
  /** The repository checkout inside the session dir. */
  workspacePath: 'local_workspace_path',
  /** `true` when a fresh launch created the session dir (a rollback may remove it). */
  workspaceCreated: 'local_workspace_created',
  /** `fresh` or `revive`: a provisional row of a revive must not destroy the workspace. */
  launchKind: 'local_launch_kind',
  agentctlPid: 'local_agentctl_pid',
  /** Start time of the agentctl process (clock ticks since boot, /proc/<pid>/stat field 22): guards against pid reuse. */
  agentctlProcStart: 'local_agentctl_proc_start',
  agentctlPath: 'local_agentctl_path',
  controlPort: 'local_agentctl_control_port',
  instancePort: 'local_agentctl_instance_port',
  /**
   * `true` when the sandbox has no network of its own (a network policy): agentctl is reached through
   * the control socket in the session dir ({@link FILES.controlSocket}), never on a loopback port.
   */
  privateNetwork: 'local_private_network',
  instanceId: 'agentctl_instance_id',
  state: 'inventory_state',
} as const;

/**
 * Env var set on every agentctl we start: `<sessionDir>#<instanceId>`, so a kill only hits our own
 * process. The `AGENTCTL_` prefix matters: agentctl strips those from its children, so only agentctl
 * itself carries the marker (never the agent).
 */
export const OWNER_ENV = 'AGENTCTL_BERTH_OWNER';

/**
 * Env var set on every launch child the controller runs for a session (the clone): its session dir.
 * Recovery finds orphans by it (`/proc/<pid>/environ`) after the controller that started them died.
 */
export const LAUNCH_CHILD_ENV = 'BERTH_LAUNCH_OWNER';

/** Files under the session dir. */
export const FILES = {
  repo: 'repo',
  agentctlLog: 'agentctl.log',
  agentctlState: 'agentctl-state',
  /** The agent's private home (`HOME` inside the sandbox): kept across stop/resume, removed with the session. */
  home: 'home',
  /** agentctl's control socket of a session without a network of its own (bound by the controller, invisible in the sandbox). */
  controlSocket: 'agentctl.sock',
} as const;
