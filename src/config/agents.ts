/**
 * The agents of `berth.yaml` (`agents.<name>`) resolved, over the built-in ones: `demo` (agentctl's
 * scripted demo agent, raw) and `demo-acp` (the same speaking the Agent Client Protocol), so a fresh
 * install needs no config. An ACP agent gets the launch prompt as its first turn, never in argv.
 * @module
 */
import type { z } from 'zod';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { emptyMap } from '../shared/own.js';
import type { ConfigFileSchema } from './schema.js';

/** Placeholder in agent argv replaced by the launch prompt. */
export const PROMPT_PLACEHOLDER = '{{prompt}}';
/**
 * Placeholder allowed as the first argv element of an agent command: replaced, in each instance, by
 * the argv that runs agentctl there (local: node + the bundle; a Pod: Berth's launcher in /opt/berth).
 */
export const AGENTCTL_PLACEHOLDER = '{{agentctl}}';
/** Placeholder in agent argv replaced by the path of a file holding the prompt (`prompt: file`). */
export const PROMPT_FILE_PLACEHOLDER = '{{prompt_file}}';

/** The agent `defaults.agent` names when berth.yaml does not. */
export const BUILTIN_AGENT = 'demo';

/** How an agent gets the prompt (besides BERTH_PROMPT): argv `{{prompt}}`, its stdin (then closed), or a file. */
type PromptInput = 'argv' | 'stdin' | 'file';

/** Who answers an ACP agent's permission requests (agentctl's approve policy). */
type ApprovePolicy = 'ask' | 'auto-edits' | 'auto-all';

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
  description: string;
}

type RawAgents = z.output<typeof ConfigFileSchema>['agents'];

const BUILTIN_AGENTS: readonly AgentProfile[] = [
  {
    name: BUILTIN_AGENT,
    // agentctl's built-in demo agent: runs wherever agentctl runs (locally, in a Pod with or without Node)
    command: [AGENTCTL_PLACEHOLDER, 'demo-agent'],
    env: {},
    protocol: 'raw',
    approve: 'ask',
    description: 'a scripted demo agent (no API key needed)',
  },
  {
    name: 'demo-acp',
    command: [AGENTCTL_PLACEHOLDER, 'demo-acp-agent'],
    env: {},
    protocol: 'acp',
    approve: 'ask',
    description: 'the scripted demo agent speaking the Agent Client Protocol: asks before it writes a file (no API key needed)',
  },
];

/** The built-in agents with the config's over them (a config entry of the same name replaces a built-in one). */
export function resolveAgents(raw: RawAgents, source: string | null): Record<string, AgentProfile> {
  const agents = emptyMap<AgentProfile>();
  for (const a of BUILTIN_AGENTS) agents[a.name] = { ...a, command: [...a.command] };
  for (const [name, a] of Object.entries(raw ?? {})) {
    const field = (key: string): string => `agents.${name}.${key}`;
    const protocol = a.protocol ?? 'raw';
    const promptInput = a.prompt ?? 'argv';
    if (protocol === 'acp') {
      if (a.prompt !== undefined) throw new ConfigFieldError(field('prompt'), 'is not used by an ACP agent (protocol: acp): the prompt is sent as its first turn', source);
      const placeholder = [PROMPT_PLACEHOLDER, PROMPT_FILE_PLACEHOLDER].find((p) => a.command.some((arg) => arg.includes(p)));
      if (placeholder !== undefined) throw new ConfigFieldError(field('command'), `uses ${placeholder}, but an ACP agent (protocol: acp) gets the prompt as its first turn, not in argv`, source);
    } else {
      if (a.approve !== undefined) throw new ConfigFieldError(field('approve'), 'is only meaningful for an ACP agent (add "protocol: acp")', source);
      if (promptInput !== 'file' && a.command.some((arg) => arg.includes(PROMPT_FILE_PLACEHOLDER))) {
        throw new ConfigFieldError(field('command'), `uses ${PROMPT_FILE_PLACEHOLDER}, which needs "prompt: file"`, source);
      }
    }
    agents[name] = {
      name,
      command: [...a.command],
      env: a.env ?? {},
      ...(protocol === 'raw' ? { promptInput } : {}),
      protocol,
      approve: a.approve ?? 'ask',
      description: a.description ?? '',
    };
  }
  return agents;
}
