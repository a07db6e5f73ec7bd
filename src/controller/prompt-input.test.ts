import { describe, expect, it } from 'vitest';
import type { SessionRequestData } from '../inventory/index.js';
import { agentStartPlan, promptInputOf, recordedAgentArgv, renderAgentArgv } from './prompt-input.js';

const request = (over: Partial<SessionRequestData>): SessionRequestData => ({
  env: {},
  secretEnv: [],
  prompt: 'do {{prompt_file}} things',
  agentCommand: [],
  agentEnv: { A: '1' },
  profileEnv: {},
  ...over,
});

describe('agent prompt delivery', () => {
  it('argv: renders {{prompt}} and sets BERTH_PROMPT only', () => {
    const command = renderAgentArgv({ command: ['agent', '-p', '{{prompt}}'] }, 'fix it');
    const plan = agentStartPlan(request({ prompt: 'fix it', agentCommand: command }), command, '/ws', 'agent-1');
    expect(plan).toEqual({ command: ['agent', '-p', 'fix it'], env: { A: '1', BERTH_PROMPT: 'fix it' }, file: null, stdin: null });
  });

  it('file: writes the prompt in the workspace and puts its path where {{prompt_file}} was, even when the prompt contains the placeholder', () => {
    const command = renderAgentArgv({ command: ['agent', '--task-file={{prompt_file}}'] }, 'unused');
    const plan = agentStartPlan(request({ promptInput: 'file', agentCommand: command }), command, '/ws', 'agent-2');
    expect(plan.command).toEqual(['agent', '--task-file=/ws/.berth/prompt-agent-2.txt']);
    expect(plan.file).toEqual({ path: '.berth/prompt-agent-2.txt', content: 'do {{prompt_file}} things' });
    expect(plan.env.BERTH_PROMPT_FILE).toBe('/ws/.berth/prompt-agent-2.txt');
  });

  it('stdin: passes the prompt to write to stdin', () => {
    const plan = agentStartPlan(request({ promptInput: 'stdin', prompt: 'hi' }), ['agent'], '/ws', 'agent-1');
    expect(plan.stdin).toBe('hi');
    expect(plan.command).toEqual(['agent']);
  });
});

describe('ACP agents', () => {
  it('records the argv as configured and sends the prompt as the first turn, with the approve policy', () => {
    const command = recordedAgentArgv({ command: ['{{agentctl}}', 'demo-acp-agent'], protocol: 'acp' }, 'write x.md');
    expect(command).toEqual(['{{agentctl}}', 'demo-acp-agent']);
    const plan = agentStartPlan(request({ protocol: 'acp', approve: 'auto-edits', prompt: 'write x.md', agentCommand: command }), ['node', 'agentctl.cjs', 'demo-acp-agent'], '/ws', 'agent-1');
    expect(plan).toEqual({
      command: ['node', 'agentctl.cjs', 'demo-acp-agent'],
      env: { A: '1', BERTH_PROMPT: 'write x.md' },
      file: null,
      stdin: null,
      acp: { protocol: 'acp', approve: 'auto-edits', prompt: 'write x.md' },
    });
    expect(promptInputOf({ protocol: 'acp', approve: 'ask', promptInput: 'argv' })).toEqual({ protocol: 'acp', approve: 'ask' });
  });

  it('starts without a first turn when there is no prompt', () => {
    const plan = agentStartPlan(request({ protocol: 'acp', prompt: null }), ['agent'], '/ws', 'agent-1');
    expect(plan.acp).toEqual({ protocol: 'acp', approve: 'ask' });
  });

  it('continues the earlier run, sets the recorded mode and names the state directory', () => {
    const plan = agentStartPlan(request({ protocol: 'acp', prompt: 'go', agentMode: 'default', agentState: 'claude' }), ['claude-agent-acp'], '/ws', 'agent-2', 'agent-1');
    expect(plan.acp).toEqual({ protocol: 'acp', approve: 'ask', prompt: 'go', resume_from: 'agent-1', mode: 'default' });
    expect(plan.agentState).toBe('claude');
    expect(agentStartPlan(request({ prompt: 'go', agentState: 'raw' }), ['x'], '/ws', 'agent-1').agentState).toBe('raw');
  });
});
