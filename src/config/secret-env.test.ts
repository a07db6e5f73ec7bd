import { describe, expect, it } from 'vitest';
import { directLaunchProblem, parseYaml, resolveConfig } from './config.js';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { ownValue } from '../shared/own.js';
import { approvedSecretEnv, resolveProfile } from './profiles.js';

const resolveRaw = (raw: unknown) => resolveConfig(raw, { source: '/etc/berth.yaml', installRoot: '/opt/berth' });

function fieldError(raw: unknown): ConfigFieldError {
  try {
    resolveRaw(raw);
  } catch (err) {
    if (err instanceof ConfigFieldError) return err;
    throw err;
  }
  throw new Error(`accepted ${JSON.stringify(raw)}`);
}

describe('secret_env in berth.yaml', () => {
  it('approves nothing without a config (the built-in local executor lists no secret)', () => {
    const cfg = resolveRaw({});
    expect(cfg.executors.local?.secretEnv).toEqual([]);
    expect(approvedSecretEnv(resolveProfile(cfg, 'local')!)).toEqual([]);
  });

  it('approves for a launch what its profile and its executor list, each name once', () => {
    const cfg = resolveRaw({
      executors: {
        local: { type: 'local', secret_env: ['ANTHROPIC_API_KEY', 'ANTHROPIC_API_KEY'] },
        k8s: { type: 'kubernetes', namespace: 'agents', secret_env: ['GH_TOKEN'] },
      },
      profiles: { big: { executor: 'local', secret_env: ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY'] } },
    });
    expect(cfg.executors.local?.secretEnv).toEqual(['ANTHROPIC_API_KEY']);
    expect(cfg.executors.k8s?.secretEnv).toEqual(['GH_TOKEN']);
    expect(cfg.profiles.big?.secretEnv).toEqual(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']);
    expect(approvedSecretEnv(resolveProfile(cfg, 'big')!)).toEqual(['OPENAI_API_KEY', 'ANTHROPIC_API_KEY']);
    expect(approvedSecretEnv(resolveProfile(cfg, 'local')!), "the executor's own list only").toEqual(['ANTHROPIC_API_KEY']);
  });

  it.each([
    [{ executors: { local: { type: 'local', secret_env: ['OK', 'BAD-NAME'] } } }, 'executors.local.secret_env[1]', 'must be an environment variable name'],
    [{ executors: { local: { type: 'local', secret_env: ['OK', 7] } } }, 'executors.local.secret_env[1]', 'must be an environment variable name'],
    [{ executors: { local: { type: 'local', secret_env: 'ANTHROPIC_API_KEY' } } }, 'executors.local.secret_env', 'must be a list of environment variable names'],
    [{ executors: { k8s: { type: 'kubernetes', secret_env: ['A=b'] } } }, 'executors.k8s.secret_env[0]', 'must be an environment variable name'],
    [{ profiles: { p: { executor: 'local', secret_env: [''] } } }, 'profiles.p.secret_env[0]', 'must be an environment variable name'],
    [{ defaults: { secret_env: ['A'] } }, 'defaults.secret_env', 'is not a known setting'],
  ])('rejects %j at %s', (raw, path, detail) => {
    const err = fieldError(raw);
    expect(err.path).toBe(path);
    expect(err.detail).toBe(detail);
    expect(err.message).toBe(`${path}: ${detail} (in /etc/berth.yaml)`);
  });
});

describe('names that every object has', () => {
  it.each([
    ['agents:\n  __proto__:\n    command: [x]\n', 'agents.__proto__'],
    ['executors:\n  __proto__:\n    type: local\n', 'executors.__proto__'],
    ['profiles:\n  __proto__:\n    executor: local\n', 'profiles.__proto__'],
    ['agents:\n  a:\n    command: [x]\n    env:\n      __proto__: v\n', 'agents.a.env.__proto__'],
    ['profiles:\n  p:\n    executor: local\n    env: { __proto__: v }\n', 'profiles.p.env.__proto__'],
  ])('refuses a __proto__ key in berth.yaml (%j) naming the field instead of dropping it', (text, path) => {
    const err = fieldError(parseYaml(text, '/etc/berth.yaml'));
    expect(err.path).toBe(path);
    expect(err.detail).toBe('is not allowed as a name');
  });

  it('keeps an agent, executor or profile really called constructor, and finds nothing else by such names', () => {
    const plain = resolveRaw({});
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__']) {
      expect(resolveProfile(plain, name), name).toBeNull();
      expect(directLaunchProblem(plain, name), name).toBeNull();
    }
    const cfg = resolveRaw({ agents: { constructor: { command: ['ctor-agent'] } }, profiles: { constructor: { executor: 'local' } } });
    expect(ownValue(cfg.agents, 'constructor')?.command).toEqual(['ctor-agent']);
    expect(resolveProfile(cfg, 'constructor')?.profile?.name).toBe('constructor');
  });

  it.each([
    [{ defaults: { agent: 'constructor' } }, 'defaults.agent'],
    [{ defaults: { executor: 'constructor' } }, 'defaults.executor'],
    [{ profiles: { p: { executor: 'constructor' } } }, 'profiles.p.executor'],
  ])('refuses %j: an inherited property is no entry', (raw, path) => {
    expect(fieldError(raw).path).toBe(path);
  });
});
