/**
 * What Berth knows of an agent: how to run it, speak to it, and what state and credentials it keeps.
 * @module
 */
/** How an agent gets the prompt (besides BERTH_PROMPT): argv `{{prompt}}`, its stdin (then closed), or a file. */
type PromptInput = 'argv' | 'stdin' | 'file';

/** Who answers an ACP agent's permission requests (agentctl's approve policy). */
type ApprovePolicy = 'ask' | 'auto-edits' | 'auto-all';

/** A file of a subscription login: `host` on the controller's host (`~/…`), copied to `state` in the agent's state directory. */
interface LoginFile {
  readonly host: string;
  readonly state: string;
}

export interface AgentProfile {
  name: string;
  /** argv; the first element is looked up in PATH by agentctl. May contain `{{prompt}}` (raw agents). */
  command: string[];
  env: Record<string, string>;
  /** @default 'argv' */
  promptInput?: PromptInput;
  /** `acp`: agentctl speaks the Agent Client Protocol with it; the prompt is its first turn. */
  protocol: 'raw' | 'acp';
  /** ACP only: the permission policy (`ask` for raw agents, where it means nothing). */
  approve: ApprovePolicy;
  /** ACP only: the session mode set once the session is open (the agent's own id), if any. */
  mode?: string;
  /** Environment variables the agent takes credentials from, passed when approved and set. */
  secretEnv: readonly string[];
  /** Files written into the agent's state directory unless there (e.g. its own config file). */
  stateFiles: readonly { readonly path: string; readonly content: string }[];
  /** Login files copied once per session into the agent's state directory. */
  loginFiles: readonly LoginFile[];
  description: string;
  /** A built-in agent (possibly overridden field by field in berth.yaml). */
  builtin?: true;
}
