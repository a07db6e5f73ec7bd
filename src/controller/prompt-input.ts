/**
 * How the launch prompt reaches the agent, as its profile asks (`agents.<name>.prompt`): always as
 * `BERTH_PROMPT`, and in argv (`{{prompt}}`, the default), on stdin (written, then closed) or in a
 * file in the workspace (`{{prompt_file}}`, also `BERTH_PROMPT_FILE`). An ACP agent
 * (`protocol: acp`) gets it as its first turn instead: agentctl sends it once the ACP session is open. The argv is rendered at
 * launch (and recorded); the file's path is known only once the workspace exists, so a NUL-delimited
 * mark stands in for it until the agent starts (a prompt cannot contain NUL: launch-limits.ts).
 * @module
 */
import { posix } from 'node:path';
import { PROMPT_FILE_PLACEHOLDER, PROMPT_PLACEHOLDER, type AgentProfile } from '../config/index.js';
import type { InstanceClient } from '../agentctl-client/index.js';
import type { SessionRequestData } from '../inventory/index.js';
import type { AgentFile } from './login-files.js';

/** Stands for the prompt file's path in a recorded argv. */
const PROMPT_FILE_MARK = '\0berth-prompt-file\0';
/** The controller's own directory in the workspace (hidden from git by its own `.gitignore`). */
const WORKSPACE_BERTH_DIR = '.berth';

/** The agent's argv with `{{prompt}}` replaced and `{{prompt_file}}` marked (a prompt containing `{{prompt_file}}` stays text). */
export function renderAgentArgv(agent: Pick<AgentProfile, 'command'>, prompt: string): string[] {
  return agent.command.map((arg) =>
    arg
      .split(PROMPT_FILE_PLACEHOLDER)
      .map((part) => part.split(PROMPT_PLACEHOLDER).join(prompt))
      .join(PROMPT_FILE_MARK),
  );
}

/** The part of the session request that says how to deliver the prompt (and, for an ACP agent, its approve policy). */
export function promptInputOf(agent: Pick<AgentProfile, 'promptInput' | 'protocol' | 'approve'>): Pick<SessionRequestData, 'promptInput' | 'protocol' | 'approve'> {
  if (agent.protocol === 'acp') return { protocol: 'acp', approve: agent.approve };
  return agent.promptInput === 'stdin' || agent.promptInput === 'file' ? { promptInput: agent.promptInput } : {};
}

/** The argv a session records for `agent`: an ACP agent's as configured, a raw one's with the prompt rendered in. */
export function recordedAgentArgv(agent: Pick<AgentProfile, 'command' | 'protocol'>, prompt: string): string[] {
  return agent.protocol === 'acp' ? [...agent.command] : renderAgentArgv(agent, prompt);
}

interface AgentStartPlan {
  command: string[];
  env: Record<string, string>;
  /** Written before the start: workspace-relative path and content. */
  file: { path: string; content: string } | null;
  /** Written to stdin right after the start, then stdin is closed. */
  stdin: string | null;
  /**
   * ACP agents: the protocol fields of agentctl's start (the prompt as the first turn, when there is
   * one; the earlier run whose conversation this one continues; the session mode).
   */
  acp?: { protocol: 'acp'; approve: NonNullable<SessionRequestData['approve']>; prompt?: string; resume_from?: string; mode?: string };
  /** The agent's per-session state directory, by name (agentctl's `agent_state`). */
  agentState?: string;
}

/**
 * What starting agent process `processId` takes (pure). `command` is the recorded argv as the
 * executor will run it; `workspacePath` is the workspace as agent processes see it.
 */
export function agentStartPlan(request: SessionRequestData, command: readonly string[], workspacePath: string, processId: string, resumeFrom: string | null = null): AgentStartPlan {
  const prompt = request.prompt ?? '';
  const env: Record<string, string> = { ...request.agentEnv, BERTH_PROMPT: prompt };
  const state = request.agentState !== undefined ? { agentState: request.agentState } : {};
  if (request.protocol === 'acp') {
    const acp = {
      protocol: 'acp' as const,
      approve: request.approve ?? 'ask',
      ...(prompt !== '' ? { prompt } : {}),
      ...(resumeFrom !== null ? { resume_from: resumeFrom } : {}),
      ...(request.agentMode !== undefined ? { mode: request.agentMode } : {}),
    };
    return { command: [...command], env, file: null, stdin: null, acp, ...state };
  }
  if (request.promptInput === 'file') {
    const rel = posix.join(WORKSPACE_BERTH_DIR, `prompt-${processId}.txt`);
    const abs = posix.join(workspacePath, rel);
    env.BERTH_PROMPT_FILE = abs;
    return { command: command.map((a) => a.split(PROMPT_FILE_MARK).join(abs)), env, file: { path: rel, content: prompt }, stdin: null, ...state };
  }
  const argv = command.map((a) => a.split(PROMPT_FILE_MARK).join(PROMPT_FILE_PLACEHOLDER));
  return { command: argv, env, file: null, stdin: request.promptInput === 'stdin' ? prompt : null, ...state };
}

/**
 * Starts agent process `id` with its prompt delivered as planned: the file first (with a
 * `.gitignore` so the workspace's `git status` stays clean), the stdin right after the start.
 * Errors of the start itself are agentctl's, for the caller to report.
 */
export async function startAgentProcess(
  client: InstanceClient,
  request: SessionRequestData,
  command: readonly string[],
  workspacePath: string,
  id: string,
  opts: { resumeFrom?: string | null; agentFiles?: readonly AgentFile[] } = {},
): Promise<{ id: string }> {
  const plan = agentStartPlan(request, command, workspacePath, id, opts.resumeFrom ?? null);
  const state = plan.agentState === undefined ? {} : { agent_state: plan.agentState, ...(opts.agentFiles !== undefined && opts.agentFiles.length > 0 ? { agent_files: [...opts.agentFiles] } : {}) };
  if (plan.file) {
    await client.files.writeFile(posix.join(WORKSPACE_BERTH_DIR, '.gitignore'), '# berth controller files, not workspace content\n*\n');
    await client.files.writeFile(plan.file.path, plan.file.content, { mode: 0o600 });
  }
  const info = await client.startProcess({ id, kind: 'agent', command: plan.command, env: plan.env, ...plan.acp, ...state });
  if (plan.stdin !== null) await client.writeStdin(info.id, plan.stdin, { eof: true });
  return info;
}
