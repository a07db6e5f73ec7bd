import { describe, expect, it } from 'vitest';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { usesAgentState } from './agents.js';
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

  it('lets berth.yaml override a built-in agent field by field, env key by key', () => {
    const claude = resolveRaw({ agents: { claude: { command: ['/opt/bin/claude-agent-acp'], env: { ANTHROPIC_BASE_URL: 'http://proxy' }, approve: 'auto-edits' } } }).agents['claude'];
    expect(claude).toMatchObject({
      command: ['/opt/bin/claude-agent-acp'],
      protocol: 'acp',
      approve: 'auto-edits',
      mode: 'default',
      env: { CLAUDE_CONFIG_DIR: '{{agent_state}}', ANTHROPIC_BASE_URL: 'http://proxy' },
      secretEnv: ['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN', 'CLAUDE_CODE_OAUTH_TOKEN'],
    });
    expect(resolveRaw({ agents: { 'demo-acp': { command: ['mine'], protocol: 'raw' } } }).agents['demo-acp']).toMatchObject({ command: ['mine'], protocol: 'raw' });
    expect(resolveRaw({ agents: { codex: { credential_env: [], login_files: [] } } }).agents['codex']).toMatchObject({ command: ['codex-acp'], secretEnv: [], loginFiles: [] });
  });

  it('offers presets for claude, codex, gemini and opencode that keep their state per session', () => {
    const agents = resolveRaw({}).agents;
    for (const name of ['claude', 'codex', 'gemini', 'opencode']) {
      expect(agents[name]?.protocol, name).toBe('acp');
      expect(usesAgentState(agents[name]!), name).toBe(true);
    }
  });

  it.each([
    [{ agents: { a: { command: ['x'], protocol: 'json' } } }, 'agents.a.protocol', 'must be raw or acp'],
    [{ agents: { a: { command: ['x'], protocol: 'acp', approve: 'yes' } } }, 'agents.a.approve', 'must be ask, auto-edits or auto-all'],
    [{ agents: { a: { command: ['x'], approve: 'auto-all' } } }, 'agents.a.approve', 'is only meaningful for an ACP agent (add "protocol: acp")'],
    [{ agents: { a: { command: ['x'], protocol: 'acp', prompt: 'stdin' } } }, 'agents.a.prompt', 'is not used by an ACP agent (protocol: acp): the prompt is sent as its first turn'],
    [{ agents: { a: { command: ['x', '{{prompt}}'], protocol: 'acp' } } }, 'agents.a.command', 'uses {{prompt}}, but an ACP agent (protocol: acp) gets the prompt as its first turn, not in argv'],
    [{ agents: { a: { env: { A: 'b' } } } }, 'agents.a.command', 'is required (only a built-in agent may leave it out)'],
    [{ agents: { claude: { command: ['claude', '-p', '{{prompt}}'] } } }, 'agents.claude.command', 'add "protocol: raw" for a raw agent'],
    [{ agents: { a: { command: ['x'], mode: 'default' } } }, 'agents.a.mode', 'is only meaningful for an ACP agent'],
    [{ agents: { claude: { login_files: [{ host: 'rel/path', state: 'x' }] } } }, 'agents.claude.login_files[0].host', 'must be absolute or start with ~/'],
    [{ agents: { claude: { login_files: [{ host: '~/x', state: '../x' }] } } }, 'agents.claude.login_files[0].state', 'must be a relative path inside the agent state directory'],
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

describe('the README agents example', () => {
  it('is a valid berth.yaml whose overrides keep the presets', async () => {
    const { readFileSync } = await import('node:fs');
    const { parse } = await import('yaml');
    const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('### Agents'));
    const block = /```yaml\n([\s\S]*?)```/.exec(section)?.[1] ?? '';
    const agents = resolveRaw(parse(block) as object).agents;
    expect(agents['claude']).toMatchObject({ command: ['/opt/claude/bin/claude-agent-acp'], protocol: 'acp', approve: 'auto-edits', mode: 'default' });
    expect(agents['aider']).toMatchObject({ protocol: 'raw' });
    expect(agents['mine']).toMatchObject({ protocol: 'acp', mode: 'default', secretEnv: ['MY_KEY'] });
  });
});
