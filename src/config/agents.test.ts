import { describe, expect, it } from 'vitest';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { resolveConfig } from './config.js';

const resolveRaw = (raw: unknown) => resolveConfig(raw, { source: '/etc/berth.yaml', installRoot: '/opt/berth' });

describe('agents: protocol and approve', () => {
  it('has the built-in demo-acp agent: agentctl demo-acp-agent over ACP, asking a person', () => {
    const cfg = resolveRaw({});
    expect(cfg.agents['demo-acp']).toMatchObject({ command: ['{{agentctl}}', 'demo-acp-agent'], protocol: 'acp', approve: 'ask' });
    expect(cfg.agents.demo).toMatchObject({ protocol: 'raw' });
  });

  it('reads protocol and approve, defaulting to raw and ask', () => {
    const cfg = resolveRaw({
      agents: {
        gemini: { command: ['gemini', '--acp'], protocol: 'acp', approve: 'auto-edits' },
        plain: { command: ['x', '{{prompt}}'] },
        asking: { command: ['y'], protocol: 'acp' },
      },
    });
    expect(cfg.agents.gemini).toMatchObject({ protocol: 'acp', approve: 'auto-edits', command: ['gemini', '--acp'] });
    expect(cfg.agents.gemini?.promptInput).toBeUndefined();
    expect(cfg.agents.plain).toMatchObject({ protocol: 'raw', promptInput: 'argv' });
    expect(cfg.agents.asking).toMatchObject({ protocol: 'acp', approve: 'ask' });
  });

  it('lets berth.yaml replace a built-in agent', () => {
    expect(resolveRaw({ agents: { 'demo-acp': { command: ['mine'] } } }).agents['demo-acp']).toMatchObject({ command: ['mine'], protocol: 'raw' });
  });

  it.each([
    [{ agents: { a: { command: ['x'], protocol: 'json' } } }, 'agents.a.protocol', 'must be raw or acp'],
    [{ agents: { a: { command: ['x'], protocol: 'acp', approve: 'yes' } } }, 'agents.a.approve', 'must be ask, auto-edits or auto-all'],
    [{ agents: { a: { command: ['x'], approve: 'auto-all' } } }, 'agents.a.approve', 'is only meaningful for an ACP agent (add "protocol: acp")'],
    [{ agents: { a: { command: ['x'], protocol: 'acp', prompt: 'stdin' } } }, 'agents.a.prompt', 'is not used by an ACP agent (protocol: acp): the prompt is sent as its first turn'],
    [{ agents: { a: { command: ['x', '{{prompt}}'], protocol: 'acp' } } }, 'agents.a.command', 'uses {{prompt}}, but an ACP agent (protocol: acp) gets the prompt as its first turn, not in argv'],
  ])('refuses %j naming %s', (raw, path, message) => {
    let err: unknown;
    try {
      resolveRaw(raw);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigFieldError);
    expect(err).toMatchObject({ path });
    expect((err as Error).message).toContain(message);
  });
});
