import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig, renderAgentCommand, resolveConfig } from './config.js';
import { ConfigFieldError, ConfigFileError } from './errors.js';

const installRoot = '/opt/berth';
const resolveRaw = (raw: unknown) => resolveConfig(raw, { source: '/etc/berth.yaml', installRoot });

const dirs: string[] = [];
function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'berth-config-'));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('resolveConfig', () => {
  it('provides the demo agent and the local executor with no config at all', () => {
    const cfg = resolveRaw({});
    expect(cfg.defaults).toEqual({ executor: 'local', agent: 'demo' });
    expect(cfg.agents.demo?.command).toEqual([process.execPath, '/opt/berth/agents/demo-agent.mjs']);
    expect(cfg.executors.local).toMatchObject({ type: 'local', agentctlPath: '/opt/berth/dist/agentctl.cjs' });
  });

  it('merges user entries over the built-ins and resolves relative paths against the config file', () => {
    const cfg = resolveRaw({
      executors: { local: { type: 'local', agentctl_path: 'bin/agentctl.cjs' }, k8s: { type: 'kubernetes', namespace: 'agents' } },
      profiles: { big: { executor: 'k8s', env: { X: '1' } } },
      agents: { claude: { command: ['claude', '-p', '{{prompt}}'], env: { A: 'b' }, description: 'Claude Code' } },
      defaults: { agent: 'claude', executor: 'big' },
    });
    expect(cfg.executors.local).toMatchObject({ agentctlPath: '/etc/bin/agentctl.cjs' });
    expect(cfg.executors.k8s).toMatchObject({ type: 'kubernetes', namespace: 'agents', authMode: 'kubeconfig', requestTimeoutSeconds: 30 });
    expect(cfg.profiles.big).toEqual({ name: 'big', executor: 'k8s', env: { X: '1' }, description: '' });
    expect(cfg.agents.demo, 'built-ins stay available').toBeDefined();
    expect(renderAgentCommand(cfg.agents.claude!, 'fix it')).toEqual(['claude', '-p', 'fix it']);
  });

  it.each([
    [{ agents: { claude: { command: [] } } }, 'agents.claude.command', 'must be a non-empty array of strings'],
    [{ agents: { claude: { command: 'claude' } } }, 'agents.claude.command', 'must be a non-empty array of strings'],
    [{ agents: { claude: { command: ['claude', ''] } } }, 'agents.claude.command.1', 'must be a non-empty array of strings'],
    [{ agents: { claude: { command: ['x'], args: [] } } }, 'agents.claude.args', 'is not a known setting'],
    [{ agents: { claude: { command: ['x'], env: { 'BAD-NAME': 'v' } } } }, 'agents.claude.env.BAD-NAME', 'must be a valid environment variable name'],
    [{ agents: { claude: { command: ['x'], env: { PORT: 80 } } } }, 'agents.claude.env.PORT', 'must be a string (quote numbers and booleans)'],
    [{ agents: { Bad_Name: { command: ['x'] } } }, 'agents.Bad_Name', 'must be a name of lowercase letters, digits, "-" or "_"'],
    [{ executors: { x: { type: 'docker' } } }, 'executors.x.type', 'must have type "local" or "kubernetes"'],
    [{ executors: { x: { type: 'kubernetes', request_timeout_seconds: 900 } } }, 'executors.x.request_timeout_seconds', 'must be between 1 and 300'],
    [{ profiles: { p: { executor: 'nope' } } }, 'profiles.p.executor', 'must name an entry of executors (local)'],
    [{ defaults: { agent: 'ghost' } }, 'defaults.agent', 'must name an entry of agents'],
    [{ defaults: { executor: 'ghost' } }, 'defaults.executor', 'must name an entry of executors or profiles'],
    [{ extra: 1 }, 'extra', 'is not a known setting'],
    [{ agents: { claude: { comand: ['claude'] } } }, 'agents.claude.comand', "is not a known setting (did you mean 'command'?)"],
    [{ agents: { claude: { program: ['claude'] } } }, 'agents.claude.program', 'is not a known setting'],
  ])('rejects %j at %s', (raw, path, detail) => {
    let caught: unknown;
    try {
      resolveRaw(raw);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigFieldError);
    expect((caught as ConfigFieldError).path).toBe(path);
    expect((caught as ConfigFieldError).detail).toBe(detail);
    expect((caught as Error).message).toBe(`${path}: ${detail} (in /etc/berth.yaml)`);
  });
});

describe('loadConfig', () => {
  it('uses the built-in defaults when the data dir has no berth.yaml', () => {
    const cfg = loadConfig({ dataDir: tempDir(), installRoot });
    expect(cfg.source).toBeNull();
    expect(Object.keys(cfg.agents)).toEqual(['demo']);
  });

  it('reads <dataDir>/berth.yaml', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'berth.yaml'), 'agents:\n  echo:\n    command: [echo, hi]\n');
    const cfg = loadConfig({ dataDir: dir, installRoot });
    expect(cfg.source).toBe(join(dir, 'berth.yaml'));
    expect(cfg.agents.echo?.command).toEqual(['echo', 'hi']);
  });

  it('fails when an explicit --config file does not exist', () => {
    expect(() => loadConfig({ dataDir: tempDir(), path: '/nonexistent/berth.yaml', installRoot })).toThrow(
      'config /nonexistent/berth.yaml: file not found',
    );
  });

  it.each([
    // the parser notices the missing quote at the end of the document
    ['an unclosed quote', 'agents:\n  x:\n    command: ["sk-live-SECRET]\n', 4],
    ['a duplicate key', 'agents: {}\nagents: {}\n', 2],
    ['bad indentation', 'agents:\n  x:\n command: [a]\n   env: 1\n', null],
  ])('reports %s with a position and without echoing file content', (_what, text, line) => {
    const dir = tempDir();
    const file = join(dir, 'berth.yaml');
    writeFileSync(file, text);
    let caught: unknown;
    try {
      loadConfig({ dataDir: dir, installRoot });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigFileError);
    const err = caught as ConfigFileError;
    if (line !== null) expect(err.line).toBe(line);
    expect(err.line, 'every YAML error carries a position').not.toBeNull();
    expect(err.message).toMatch(/invalid YAML/);
    expect(err.message).not.toContain('SECRET');
    expect(err.message).not.toContain('command');
  });

  it('rejects a YAML document that is not a map', () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'berth.yaml'), '- a\n- b\n');
    expect(() => loadConfig({ dataDir: dir, installRoot })).toThrow(ConfigFieldError);
  });
});
