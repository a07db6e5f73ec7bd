/**
 * Controller configuration: `berth.yaml` with built-in defaults.
 * @module
 */
export {
  loadConfig,
  resolveConfig,
  renderAgentCommand,
  findInstallRoot,
  CONFIG_FILE,
  BUILTIN_AGENT,
  BUILTIN_EXECUTOR,
  PROMPT_PLACEHOLDER,
  type AgentProfile,
  type ExecutorConfig,
  type KubernetesExecutorConfig,
  type LocalExecutorConfig,
  type LoadConfigOptions,
  type ProfileConfig,
  type ResolvedConfig,
} from './config.js';
export { ConfigFieldError, ConfigFileError } from './errors.js';
