/**
 * The one check of a launch request before anything is recorded or created (pure): the launch
 * target and its executor, the repository (required unless the executor starts empty workspaces),
 * the agent, the env names, the approved secrets, the size and name limits. It returns every
 * problem with its field, or the launch as the manager records it. The manager then runs the one
 * I/O check (the repository: repo-check.ts), then the launch.
 * @module
 */
import { approvedSecretEnv, directLaunchProblem, launchTargetNames, resolveProfile, usesAgentState, type AgentProfile, type ResolvedConfig, type ResolvedProfile } from '../config/index.js';
import type { ExecutorCapabilities, ExecutorProfileSnapshot, RepositoryCredentials } from '../executors/executor.js';
import type { SessionRequestData } from '../inventory/index.js';
import { ENV_NAME } from '../shared/env-name.js';
import { launchRequestProblems, type LimitProblem } from '../shared/launch-limits.js';
import { ownValue } from '../shared/own.js';
import { promptInputOf, recordedAgentArgv } from './prompt-input.js';
import { splitRepositoryRef } from './repo-credentials.js';
import { LaunchValidationError, type LaunchRequest, type RepositoryRef } from './service.js';

/** A problem of a launch request: the dotted field (`repository.url`, `env.FOO`) and what is wrong with it. */
type LaunchProblem = LimitProblem;

/** What the check reads besides the request. */
export interface LaunchCheckContext {
  config: ResolvedConfig;
  /** What the executor entry `name` can do; undefined when this controller runs no executor of that name. */
  capabilitiesOf(name: string): ExecutorCapabilities | undefined;
  /** Whether an approved secret env name has a value in the controller's environment. */
  isSecretSet(name: string): boolean;
  /** The profile snapshot of a launch target (asked only for a target that resolves to a running executor). */
  snapshotProfile(name: string): ExecutorProfileSnapshot;
}

/** A launch request that passed the check: what the manager records and launches. */
export interface CheckedLaunch {
  /** The launch target as named (an executor entry or a profile). */
  target: string;
  /** The executor entry it runs on. */
  executor: string;
  capabilities: ExecutorCapabilities;
  agent: string;
  /** The repository as recorded: no credential in its URL (`credentials: true` when one was split off). */
  repository: RepositoryRef & { credentials?: true };
  /** The credential split off the URL, for the encrypted store. */
  credentials?: RepositoryCredentials;
  /** The session's request as recorded (prompt, env, the agent's argv, the profile snapshot). */
  request: SessionRequestData;
}

type LaunchCheck = { ok: true; launch: CheckedLaunch } | { ok: false; problems: LaunchProblem[] };

/** Checks a launch request (see the module comment); the problems come in the order the fields are listed there. */
export function checkLaunch(req: LaunchRequest, ctx: LaunchCheckContext): LaunchCheck {
  const { config } = ctx;
  const problems: LaunchProblem[] = [];
  const targetName = req.executor ?? config.defaults.executor;
  const target = resolveProfile(config, targetName);
  const executorProblem = launchTargetProblem(config, targetName, target, ctx.capabilitiesOf);
  if (executorProblem !== null) problems.push({ field: 'executor', message: executorProblem });
  const capabilities = target === null ? undefined : ctx.capabilitiesOf(target.executor.name);
  // Whether a repository is required is the executor's to say: not claimed of an unknown one.
  const repo = repositoryProblems(req.repository, { optional: capabilities?.repositoryOptional ?? executorProblem !== null });
  problems.push(...repo.problems);
  const split = splitCredentials(repo.repository, problems);
  const agentName = req.agent ?? config.defaults.agent;
  const agent = ownValue(config.agents, agentName);
  if (!agent) problems.push({ field: 'agent', message: `unknown agent '${agentName}' (configured: ${Object.keys(config.agents).join(', ')})` });
  for (const key of Object.keys(req.env ?? {})) {
    if (!ENV_NAME.test(key)) problems.push({ field: `env.${key}`, message: 'must be a valid environment variable name' });
  }
  problems.push(...secretEnvProblems(req.secretEnv ?? [], target, ctx.isSecretSet), ...launchRequestProblems(req));
  if (problems.length > 0 || target === null || capabilities === undefined || agent === undefined || split === null) return { ok: false, problems };
  const profile = ctx.snapshotProfile(targetName);
  return {
    ok: true,
    launch: {
      target: targetName,
      executor: target.executor.name,
      capabilities,
      agent: agentName,
      ...split,
      request: sessionRequestOf(req, agent, profile, agentSecrets(agent, target, req.secretEnv ?? [], ctx.isSecretSet)),
    },
  };
}

/** The error a launch with `problems` is refused with: the first one in its field and message, all of them in `problems`. */
export function launchValidationError(problems: readonly LaunchProblem[]): LaunchValidationError {
  const [first] = problems;
  if (first === undefined) throw new Error('launchValidationError: no problem to report');
  return new LaunchValidationError(first.field, first.message, problems);
}

/** Why `name` cannot be launched on (unknown, a Kubernetes executor without a profile, not built here), or null. */
function launchTargetProblem(config: ResolvedConfig, name: string, target: ResolvedProfile | null, capabilitiesOf: LaunchCheckContext['capabilitiesOf']): string | null {
  if (target === null) return `unknown executor or profile '${name}' (configured: ${launchTargetNames(config).join(', ')})`;
  const direct = directLaunchProblem(config, name);
  if (direct !== null) return direct;
  if (capabilitiesOf(target.executor.name) === undefined) {
    return `executor '${target.executor.name}' (type ${target.executor.type}) is not available in this build of berth`;
  }
  return null;
}

/**
 * The agent's credential variables (`credential_env`) a launch passes besides the ones it names:
 * each the launch target approves and `berth serve` has. The approval stays the gate.
 */
function agentSecrets(agent: Pick<AgentProfile, 'secretEnv'>, target: ResolvedProfile, named: readonly string[], isSet: (name: string) => boolean): string[] {
  const approved = new Set(approvedSecretEnv(target));
  return agent.secretEnv.filter((name) => !named.includes(name) && approved.has(name) && isSet(name));
}

/** The session request as recorded: copies of the request's env and secret names, the agent's argv and env, the profile. */
function sessionRequestOf(req: LaunchRequest, agent: AgentProfile, profile: ExecutorProfileSnapshot, agentSecretEnv: readonly string[]): SessionRequestData {
  const prompt = req.prompt ?? null;
  const secretEnv = [...(req.secretEnv ?? []), ...agentSecretEnv];
  // a login is copied only when no credential variable of the agent's goes in: never both
  const login = agent.loginFiles.length > 0 && !agent.secretEnv.some((n) => secretEnv.includes(n));
  return {
    env: { ...(req.env ?? {}) },
    secretEnv,
    prompt,
    agentCommand: recordedAgentArgv(agent, prompt ?? ''),
    agentEnv: { ...agent.env },
    ...promptInputOf(agent),
    ...(usesAgentState(agent) ? { agentState: agent.name } : {}),
    ...(agent.protocol === 'acp' && agent.mode !== undefined ? { agentMode: agent.mode } : {}),
    ...(login ? { loginFiles: agent.loginFiles.map((f) => ({ host: f.host, state: f.state })) } : {}),
    ...(agent.stateFiles.length > 0 && usesAgentState(agent) ? { stateFiles: agent.stateFiles.map((f) => ({ ...f })) } : {}),
    profileEnv: { ...profile.env },
    profile,
  };
}

/** Splits a credential off the repository URL (repo-credentials.ts); a URL it refuses adds its problem. Null when it did. */
function splitCredentials(repository: RepositoryRef, problems: LaunchProblem[]): Pick<CheckedLaunch, 'repository' | 'credentials'> | null {
  try {
    const { repository: recorded, credentials } = splitRepositoryRef(repository);
    return { repository: recorded, ...(credentials ? { credentials } : {}) };
  } catch (err) {
    if (!(err instanceof LaunchValidationError)) throw err;
    problems.push(...err.problems);
    return null;
  }
}

/**
 * The problems of a launch's `secretEnv` names against the ones `berth.yaml` approves for its
 * target (`secret_env` of the profile and of its executor), at most one per name, each naming
 * `secretEnv.NAME`. A name that is not approved gets the same answer whether or not serve's
 * environment has it, so a launch cannot probe that environment; an approved name that is unset
 * may say so (an admin listed it).
 */
export function secretEnvProblems(names: readonly string[], target: ResolvedProfile | null, isSet: (name: string) => boolean): LaunchProblem[] {
  const approved = new Set(target === null ? [] : approvedSecretEnv(target));
  const problems: LaunchProblem[] = [];
  for (const name of names) {
    if (typeof name !== 'string' || !ENV_NAME.test(name)) problems.push({ field: `secretEnv.${String(name)}`, message: 'must be a valid environment variable name' });
    else if (!approved.has(name)) problems.push({ field: `secretEnv.${name}`, message: `is not an approved secret for ${describeTarget(target)}` });
    else if (!isSet(name)) problems.push({ field: `secretEnv.${name}`, message: 'is not set in the controller environment' });
  }
  return problems;
}

function describeTarget(target: ResolvedProfile | null): string {
  if (target === null) return 'this launch';
  const executor = `executors.${target.executor.name}.secret_env`;
  return target.profile === null
    ? `executor '${target.executor.name}' (add it to ${executor} in berth.yaml)`
    : `profile '${target.profile.name}' (add it to profiles.${target.profile.name}.secret_env or ${executor} in berth.yaml)`;
}

/**
 * Checks and copies a repository reference: exactly one of url and path, or — where the executor
 * starts empty workspaces (`optional`) — none at all (`{}`); a branch only with one of them. Every
 * problem names its field; `repository` is what of the reference is valid.
 */
export function repositoryProblems(repo: LaunchRequest['repository'] | null | undefined, opts: { optional?: boolean } = {}): { repository: RepositoryRef; problems: LaunchProblem[] } {
  const out: RepositoryRef = {};
  if ((repo === undefined || repo === null) && opts.optional) return { repository: out, problems: [] };
  if (repo === undefined || repo === null || typeof repo !== 'object') return { repository: out, problems: [{ field: 'repository', message: 'is required (url or path)' }] };
  const problems: LaunchProblem[] = [];
  const text = (field: 'url' | 'path' | 'branch'): void => {
    const value: unknown = repo[field];
    if (value === undefined) return;
    if (typeof value !== 'string' || value.trim() === '') problems.push({ field: `repository.${field}`, message: 'must be a non-empty string' });
    else out[field] = value;
  };
  text('url');
  text('path');
  if (out.url !== undefined && out.path !== undefined) problems.push({ field: 'repository', message: 'set either url or path, not both' });
  const named = repo.url !== undefined || repo.path !== undefined;
  if (!named && !(opts.optional && repo.branch === undefined)) problems.push({ field: 'repository', message: 'is required (url or path)' });
  text('branch');
  return { repository: out, problems };
}
