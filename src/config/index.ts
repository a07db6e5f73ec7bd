/**
 * Controller configuration: `berth.yaml` with built-in defaults.
 * @module
 */
export {
  loadConfig,
  resolveConfig,
  configTextSha256,
  directLaunchProblem,
  findInstallRoot,
  type ExecutorConfig,
  type LocalExecutorConfig,
  type ResolvedConfig,
} from './config.js';
export { AGENTCTL_PLACEHOLDER, PROMPT_FILE_PLACEHOLDER, PROMPT_PLACEHOLDER, usesAgentState, type AgentProfile } from './agents.js';
export { ConfigFieldError } from '../shared/config-field-error.js';
export { ConfigFileError } from './errors.js';
export { approvedSecretEnv, idlePolicy, launchTargetNames, resolveProfile, type ResolvedProfile } from './profiles.js';
export type { IdlePolicy } from './idle.js';
