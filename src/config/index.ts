/**
 * Controller configuration: `berth.yaml` with built-in defaults.
 * @module
 */
export {
  loadConfig,
  resolveConfig,
  renderAgentCommand,
  configTextSha256,
  directLaunchProblem,
  findInstallRoot,
  CONFIG_FILE,
  BUILTIN_AGENT,
  BUILTIN_EXECUTOR,
  PROMPT_PLACEHOLDER,
  AGENTCTL_PLACEHOLDER,
  PROMPT_FILE_PLACEHOLDER,
  type PromptInput,
  type AgentProfile,
  type ExecutorConfig,
  type KubernetesExecutorConfig,
  type LocalExecutorConfig,
  type LoadConfigOptions,
  type ProfileConfig,
  type ResolvedConfig,
} from './config.js';
export { ConfigFieldError } from '../shared/config-field-error.js';
export { ConfigFileError } from './errors.js';
export { approvedSecretEnv, launchTargetNames, resolveProfile, type ResolvedProfile } from './profiles.js';
