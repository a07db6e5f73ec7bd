import { describe, expect, it } from 'vitest';
import { previousAgentProcessId, recordedAgentId } from './agent.js';

describe('agent runs', () => {
  it('names the run before agent-N', () => {
    expect(previousAgentProcessId('agent-2')).toBe('agent-1');
    expect(previousAgentProcessId('agent-10')).toBe('agent-9');
    expect(previousAgentProcessId('agent-1')).toBeNull();
    expect(previousAgentProcessId('agent-0')).toBeNull();
    expect(previousAgentProcessId('agent-01')).toBeNull();
    expect(previousAgentProcessId('shell-3')).toBeNull();
  });

  it('reads the recorded agent of a runtime row', () => {
    expect(recordedAgentId({ agent_process_id: 'agent-3' })).toBe('agent-3');
    expect(recordedAgentId({})).toBeUndefined();
  });
});
