/**
 * The agents of `berth.yaml` (`agents.<name>`) resolved over the built-in ones (agent-presets.ts):
 * an entry named like a built-in agent overrides it field by field (`env` key by key), any other
 * needs its own `command`. An ACP agent gets the launch prompt as its first turn, never in argv.
 * @module
 */
import type { z } from 'zod';
import { AGENT_STATE_PLACEHOLDER } from '../protocol/constants.js';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { emptyMap } from '../shared/own.js';
import { AGENTCTL_PLACEHOLDER, BUILTIN_AGENT, BUILTIN_AGENTS } from './agent-presets.js';
import type { AgentProfile } from './agent-profile.js';
import type { ConfigFileSchema } from './schema.js';

export { AGENTCTL_PLACEHOLDER, BUILTIN_AGENT };
export type { AgentProfile };

/** Placeholder in agent argv replaced by the launch prompt. */
export const PROMPT_PLACEHOLDER = '{{prompt}}';
/** Placeholder in agent argv replaced by the path of a file holding the prompt (`prompt: file`). */
export const PROMPT_FILE_PLACEHOLDER = '{{prompt_file}}';

type RawAgents = z.output<typeof ConfigFileSchema>['agents'];
type RawAgent = NonNullable<RawAgents>[string];

/** Whether the agent's argv or env uses its per-session state directory (`{{agent_state}}`). */
export function usesAgentState(agent: Pick<AgentProfile, 'command' | 'env'>): boolean {
  return [...agent.command, ...Object.values(agent.env)].some((v) => v.includes(AGENT_STATE_PLACEHOLDER));
}

/** A path relative to a directory that stays inside it. */
function relativeInside(path: string): boolean {
  return !path.startsWith('/') && !path.split('/').some((s) => s === '..' || s === '' || s === '.');
}

/** The built-in agents with the config's over them. */
export function resolveAgents(raw: RawAgents, source: string | null): Record<string, AgentProfile> {
  const agents = emptyMap<AgentProfile>();
  for (const a of BUILTIN_AGENTS) agents[a.name] = { ...a, command: [...a.command], env: { ...a.env }, builtin: true };
  for (const [name, a] of Object.entries(raw ?? {})) agents[name] = resolveAgent(name, a, agents[name], source);
  return agents;
}

function resolveAgent(name: string, a: RawAgent, preset: AgentProfile | undefined, source: string | null): AgentProfile {
  const field = (key: string): string => `agents.${name}.${key}`;
  const command = a.command ?? preset?.command;
  if (command === undefined) throw new ConfigFieldError(field('command'), 'is required (only a built-in agent may leave it out)', source);
  const protocol = a.protocol ?? preset?.protocol ?? 'raw';
  const promptInput = a.prompt ?? preset?.promptInput ?? 'argv';
  if (protocol === 'acp') {
    if (a.prompt !== undefined) throw new ConfigFieldError(field('prompt'), 'is not used by an ACP agent (protocol: acp): the prompt is sent as its first turn', source);
    const placeholder = [PROMPT_PLACEHOLDER, PROMPT_FILE_PLACEHOLDER].find((p) => command.some((arg) => arg.includes(p)));
    if (placeholder !== undefined) {
      const hint = a.protocol === undefined && preset !== undefined ? ` (agents.${name} overrides the built-in ${name} agent field by field, an ACP one: add "protocol: raw" for a raw agent)` : '';
      throw new ConfigFieldError(field('command'), `uses ${placeholder}, but an ACP agent (protocol: acp) gets the prompt as its first turn, not in argv${hint}`, source);
    }
  } else {
    if (a.approve !== undefined) throw new ConfigFieldError(field('approve'), 'is only meaningful for an ACP agent (add "protocol: acp")', source);
    if (a.mode !== undefined) throw new ConfigFieldError(field('mode'), 'is only meaningful for an ACP agent (add "protocol: acp")', source);
    if (promptInput !== 'file' && command.some((arg) => arg.includes(PROMPT_FILE_PLACEHOLDER))) {
      throw new ConfigFieldError(field('command'), `uses ${PROMPT_FILE_PLACEHOLDER}, which needs "prompt: file"`, source);
    }
  }
  const loginFiles = a.login_files ?? preset?.loginFiles ?? [];
  loginFiles.forEach((f, i) => {
    if (!f.host.startsWith('~/') && !f.host.startsWith('/')) throw new ConfigFieldError(`${field('login_files')}[${i}].host`, 'must be absolute or start with ~/', source);
    if (!relativeInside(f.state)) throw new ConfigFieldError(`${field('login_files')}[${i}].state`, 'must be a relative path inside the agent state directory', source);
  });
  (a.state_files ?? []).forEach((f, i) => {
    if (!relativeInside(f.path)) throw new ConfigFieldError(`${field('state_files')}[${i}].path`, 'must be a relative path inside the agent state directory', source);
  });
  const mode = protocol === 'acp' ? (a.mode ?? preset?.mode) : undefined;
  return {
    name,
    command: [...command],
    env: { ...(preset?.env ?? {}), ...(a.env ?? {}) },
    ...(protocol === 'raw' ? { promptInput } : {}),
    protocol,
    approve: a.approve ?? preset?.approve ?? 'ask',
    ...(mode !== undefined ? { mode } : {}),
    secretEnv: [...(a.credential_env ?? preset?.secretEnv ?? [])],
    stateFiles: (a.state_files ?? preset?.stateFiles ?? []).map((f) => ({ path: f.path, content: f.content })),
    loginFiles: loginFiles.map((f) => ({ host: f.host, state: f.state })),
    description: a.description ?? preset?.description ?? '',
    ...(preset !== undefined ? { builtin: true as const } : {}),
  };
}
