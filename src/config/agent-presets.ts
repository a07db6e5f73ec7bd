/**
 * The agents Berth knows without a `berth.yaml`: its own scripted demo agents, and presets for the
 * real coding agents that speak the Agent Client Protocol (natively, or through a maintained
 * adapter). A preset says how to run the agent (the program, which must be on PATH locally or in
 * the image on Kubernetes), where it keeps its state (`{{agent_state}}`: a per-session directory
 * that survives stop, resume and Pod replacement), the ACP session mode under which it asks
 * before acting, the environment variables it takes its API key from, and the login file a
 * subscription sign-in leaves on the controller's host (copied per session into its state).
 * `berth.yaml` can override any field of a preset (`agents.claude.env` merges key by key).
 * @module
 */
import { AGENT_STATE_PLACEHOLDER } from '../protocol/constants.js';
import type { AgentProfile } from './agent-profile.js';

/** Placeholder allowed as the first argv element: the argv that runs agentctl in the instance. */
export const AGENTCTL_PLACEHOLDER = '{{agentctl}}';

/** The agent `defaults.agent` names when berth.yaml does not. */
export const BUILTIN_AGENT = 'demo';

export const BUILTIN_AGENTS: readonly AgentProfile[] = [
  {
    name: BUILTIN_AGENT,
    // agentctl's built-in demo agent: runs wherever agentctl runs (locally, in a Pod with or without Node)
    command: [AGENTCTL_PLACEHOLDER, 'demo-agent'],
    env: {},
    protocol: 'raw',
    approve: 'ask',
    secretEnv: [],
    stateFiles: [],
    loginFiles: [],
    description: 'a scripted demo agent (no API key needed)',
  },
  {
    name: 'demo-acp',
    command: [AGENTCTL_PLACEHOLDER, 'demo-acp-agent'],
    // its conversations persist there, so a resume loads them (session/load)
    env: { BERTH_DEMO_ACP_STATE: AGENT_STATE_PLACEHOLDER },
    protocol: 'acp',
    approve: 'ask',
    secretEnv: [],
    stateFiles: [],
    loginFiles: [],
    description: 'the scripted demo agent speaking the Agent Client Protocol: asks before it writes a file, resumes its conversation (no API key needed)',
  },
  {
    name: 'claude',
    // @agentclientprotocol/claude-agent-acp (bundles Claude Code)
    command: ['claude-agent-acp'],
    // with CLAUDE_CONFIG_DIR set, Claude Code keeps .claude.json there too: nothing lands in HOME
    env: { CLAUDE_CONFIG_DIR: AGENT_STATE_PLACEHOLDER, CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1' },
    protocol: 'acp',
    approve: 'ask',
    // Claude Code's own default mode lets its classifier decide; "default" asks before edits and commands
    mode: 'default',
    secretEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
    stateFiles: [],
    loginFiles: [{ host: '~/.claude/.credentials.json', state: '.credentials.json' }],
    description: 'Claude Code through its ACP adapter (claude-agent-acp on PATH; ANTHROPIC_API_KEY or a Claude login)',
  },
  {
    name: 'codex',
    // @agentclientprotocol/codex-acp (runs @openai/codex)
    command: ['codex-acp'],
    env: { CODEX_HOME: AGENT_STATE_PLACEHOLDER },
    protocol: 'acp',
    approve: 'ask',
    // codex-acp's default mode sends approvals to Codex's own reviewer, never to the client
    mode: 'workspace-write',
    secretEnv: ['OPENAI_API_KEY', 'CODEX_API_KEY'],
    // Codex's shell snapshots record the environment, API key included, in plain text in CODEX_HOME
    stateFiles: [{ path: 'config.toml', content: '[features]\nshell_snapshot = false\n' }],
    loginFiles: [{ host: '~/.codex/auth.json', state: 'auth.json' }],
    description: 'OpenAI Codex through its ACP adapter (codex-acp on PATH; OPENAI_API_KEY or a ChatGPT login)',
  },
  {
    name: 'gemini',
    command: ['gemini', '--experimental-acp'],
    env: { GEMINI_CLI_HOME: AGENT_STATE_PLACEHOLDER },
    protocol: 'acp',
    approve: 'ask',
    secretEnv: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
    stateFiles: [],
    loginFiles: [],
    description: 'Gemini CLI speaking ACP natively (gemini on PATH; GEMINI_API_KEY) — not exercised by Berth\'s tests',
  },
  {
    name: 'opencode',
    command: ['opencode', 'acp'],
    env: { XDG_DATA_HOME: `${AGENT_STATE_PLACEHOLDER}/data`, XDG_STATE_HOME: `${AGENT_STATE_PLACEHOLDER}/state` },
    protocol: 'acp',
    approve: 'ask',
    secretEnv: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY', 'OPENROUTER_API_KEY'],
    stateFiles: [],
    loginFiles: [],
    description: 'OpenCode speaking ACP natively (opencode on PATH; a provider API key) — not exercised by Berth\'s tests',
  },
];
