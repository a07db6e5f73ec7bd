import { describe, expect, it } from 'vitest';
import { resolveConfig, resolveProfile } from '../config/index.js';
import { LaunchValidationError } from './service.js';
import { checkLaunch, launchValidationError, repositoryProblems, secretEnvProblems, type LaunchCheckContext } from './validate.js';

describe('repositoryProblems', () => {
  it('copies a valid reference', () => {
    expect(repositoryProblems({ path: '/r', branch: 'main' })).toEqual({ repository: { path: '/r', branch: 'main' }, problems: [] });
    expect(repositoryProblems({ url: 'https://x/r.git' })).toEqual({ repository: { url: 'https://x/r.git' }, problems: [] });
  });

  it('takes no repository where the executor starts empty workspaces, but not a branch alone', () => {
    expect(repositoryProblems(undefined, { optional: true })).toEqual({ repository: {}, problems: [] });
    expect(repositoryProblems({}, { optional: true })).toEqual({ repository: {}, problems: [] });
    expect(repositoryProblems({ branch: 'main' }, { optional: true }).problems).toEqual([{ field: 'repository', message: 'is required (url or path)' }]);
  });

  it('reports every problem of the reference, each at its field', () => {
    expect(repositoryProblems({ url: ' ', path: '', branch: '' } as never).problems.map((p) => p.field)).toEqual(['repository.url', 'repository.path', 'repository.branch']);
  });

  it.each([
    [undefined, 'repository'],
    [{}, 'repository'],
    [{ url: 'u', path: 'p' }, 'repository'],
    [{ url: ' ' }, 'repository.url'],
    [{ path: '' }, 'repository.path'],
    [{ path: '/r', branch: '' }, 'repository.branch'],
    [{ url: 5 }, 'repository.url'],
  ])('rejects %j at %s', (repo, field) => {
    const caught = launchValidationError(repositoryProblems(repo as never).problems);
    expect(caught).toBeInstanceOf(LaunchValidationError);
    expect(caught.field).toBe(field);
  });
});

describe('secretEnvProblems', () => {
  const cfg = resolveConfig(
    { executors: { local: { type: 'local', secret_env: ['EXEC_KEY'] } }, profiles: { big: { executor: 'local', secret_env: ['PROFILE_KEY'] } } },
    { source: null, installRoot: '/opt/berth' },
  );
  const set = new Set(['EXEC_KEY', 'PROFILE_KEY', 'HOME', 'PATH']);
  const check = (names: string[], target: string) => secretEnvProblems(names, resolveProfile(cfg, target), (n) => set.has(n));
  const refusal = (names: string[], target: string): LaunchValidationError => {
    const problems = check(names, target);
    if (problems.length === 0) throw new Error('accepted');
    return launchValidationError(problems);
  };

  it('accepts the names the profile or its executor approves', () => {
    expect(check(['PROFILE_KEY', 'EXEC_KEY'], 'big')).toEqual([]);
    expect(check(['EXEC_KEY'], 'local')).toEqual([]);
  });

  it('reports one problem per refused name', () => {
    expect(check(['HOME', 'EXEC_KEY', 'A-B'], 'local').map((p) => p.field)).toEqual(['secretEnv.HOME', 'secretEnv.A-B']);
  });

  it("refuses an unapproved name with one message, whether or not serve's environment has it", () => {
    const set = refusal(['HOME'], 'big');
    const unset = refusal(['NOT_SET_ANYWHERE'], 'big');
    expect(set.field).toBe('secretEnv.HOME');
    expect(set.message).toBe("secretEnv.HOME: is not an approved secret for profile 'big' (add it to profiles.big.secret_env or executors.local.secret_env in berth.yaml)");
    expect(unset.message.replace('NOT_SET_ANYWHERE', 'HOME')).toBe(set.message);
    expect(refusal(['PROFILE_KEY'], 'local').message, "a profile's secret is not approved on its executor alone").toBe(
      "secretEnv.PROFILE_KEY: is not an approved secret for executor 'local' (add it to executors.local.secret_env in berth.yaml)",
    );
  });

  it('says an approved name is unset, and refuses a malformed one', () => {
    const approvedUnset = launchValidationError(secretEnvProblems(['EXEC_KEY'], resolveProfile(cfg, 'local'), () => false));
    expect(approvedUnset.message).toBe('secretEnv.EXEC_KEY: is not set in the controller environment');
    expect(refusal(['A-B'], 'local').message).toBe('secretEnv.A-B: must be a valid environment variable name');
  });
});

describe('checkLaunch', () => {
  const cfg = resolveConfig({ executors: { box: { type: 'local' } }, agents: { a: { command: ['a', '{{prompt}}'] } } }, { source: null, installRoot: '/opt/berth' });
  const context = (repositoryOptional: boolean): LaunchCheckContext => ({
    config: cfg,
    capabilitiesOf: (name) => (name === 'box' ? { repositoryOptional, clonesOnControllerHost: true, metadataKeyPrefix: 'box_', removes: 'the box' } : undefined),
    isSecretSet: () => false,
    snapshotProfile: () => ({ executor: 'box', profile: null, type: 'local', settings: {}, env: { P: '1' } }),
  });
  const fields = (r: ReturnType<typeof checkLaunch>): string[] => (r.ok ? [] : r.problems.map((p) => p.field));

  it('asks the executor whether a launch needs a repository', () => {
    expect(fields(checkLaunch({ executor: 'box', agent: 'a' }, context(false)))).toEqual(['repository']);
    expect(fields(checkLaunch({ executor: 'box', agent: 'a' }, context(true)))).toEqual([]);
  });

  it('does not claim a repository is required by an executor it cannot find', () => {
    expect(fields(checkLaunch({ executor: 'nope', agent: 'a' }, context(false)))).toEqual(['executor']);
  });

  it('refuses a password in a non-http URL at repository.url, with the other problems', () => {
    expect(fields(checkLaunch({ executor: 'box', agent: 'zzz', repository: { url: 'ssh://me:pw@host/x.git' } }, context(false)))).toEqual(['repository.url', 'agent']);
  });

  it('returns the launch as recorded: the target, its executor, the redacted repository and the session request', () => {
    const r = checkLaunch({ executor: 'box', agent: 'a', repository: { url: 'https://u:t@host/x.git' }, prompt: 'go' }, context(false));
    expect(r.ok && r.launch).toMatchObject({
      target: 'box',
      executor: 'box',
      agent: 'a',
      repository: { url: 'https://host/x.git', credentials: true },
      credentials: { username: 'u', password: 't' },
      request: { prompt: 'go', agentCommand: ['a', 'go'], profileEnv: { P: '1' }, env: {}, secretEnv: [] },
    });
  });

  it("passes the agent's credential variables the target approves and serve has, and copies a login only when none goes in", () => {
    const withKeys = resolveConfig({ executors: { box: { type: 'local', secret_env: ['ANTHROPIC_API_KEY', 'OTHER'] } } }, { source: null, installRoot: '/opt/berth' });
    const ctx = (set: string[]): LaunchCheckContext => ({ ...context(true), config: withKeys, isSecretSet: (n) => set.includes(n) });
    const keyed = checkLaunch({ executor: 'box', agent: 'claude', prompt: 'go' }, ctx(['ANTHROPIC_API_KEY', 'ANTHROPIC_AUTH_TOKEN']));
    // ANTHROPIC_AUTH_TOKEN is set but not approved: the approval stays the gate
    expect(keyed.ok && keyed.launch.request).toMatchObject({ secretEnv: ['ANTHROPIC_API_KEY'], agentState: 'claude', agentMode: 'default', protocol: 'acp' });
    expect(keyed.ok && keyed.launch.request.loginFiles).toBeUndefined();
    const named = checkLaunch({ executor: 'box', agent: 'claude', secretEnv: ['ANTHROPIC_API_KEY'] }, ctx(['ANTHROPIC_API_KEY']));
    expect(named.ok && named.launch.request.secretEnv).toEqual(['ANTHROPIC_API_KEY']);
    const login = checkLaunch({ executor: 'box', agent: 'claude' }, ctx([]));
    expect(login.ok && login.launch.request).toMatchObject({ secretEnv: [], loginFiles: [{ host: '~/.claude/.credentials.json', state: '.credentials.json' }] });
    const raw = checkLaunch({ executor: 'box', agent: 'demo' }, ctx([]));
    expect(raw.ok && raw.launch.request.agentState).toBeUndefined();
  });
});
