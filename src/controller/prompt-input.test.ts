import { describe, expect, it } from 'vitest';
import type { SessionRequestData } from '../inventory/index.js';
import { agentStartPlan, renderAgentArgv } from './prompt-input.js';

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
