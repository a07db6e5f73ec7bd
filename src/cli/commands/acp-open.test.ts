import { describe, expect, it } from 'vitest';
import { describeOpen } from './acp-open.js';

describe('describeOpen', () => {
  const agent = { name: 'claude-agent-acp', version: '0.101.0' };
  it('says whether a resume continued the conversation, and why not', () => {
    expect(describeOpen({ type: 'session', session_id: 's', agent, resume: { from: 'agent-1', session_id: 's', loaded: true, reason: null } }, 'resume')).toBe(
      "  claude-agent-acp 0.101.0: conversation continued (session/load of the earlier run's session s)",
    );
    expect(describeOpen({ type: 'session', session_id: 't', agent: null, resume: { from: 'agent-1', session_id: 's', loaded: false, reason: 'session/load failed: gone' } }, 'resume')).toBe(
      '  the agent: new conversation, the earlier one was not continued: session/load failed: gone',
    );
  });
  it('reports an open session, a failure and a session not open yet', () => {
    expect(describeOpen({ type: 'session', session_id: 's', agent }, 'launch')).toBe('  claude-agent-acp 0.101.0: ACP session open');
    expect(describeOpen({ type: 'error', turn: null, message: 'opening the ACP session failed: x' }, 'launch')).toBe("  the agent's ACP session failed: opening the ACP session failed: x");
    expect(describeOpen(null, 'resume')).toContain('has not opened its ACP session yet');
  });
});
