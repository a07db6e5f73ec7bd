/**
 * The one place executors are built and profiles resolved, keyed by executor type: the controller
 * asks for "the executor of this config entry" and "the profile snapshot of this launch" and never
 * branches on the type itself.
 * @module
 */
import type { ExecutorConfig, ResolvedConfig } from '../config/index.js';
import { findInstallRoot, launchTargetNames, resolveProfile, type ResolvedProfile } from '../config/index.js';
import type { Logger } from '../shared/logger.js';
import type { Executor, ExecutorProfileSnapshot } from './executor.js';
import { defaultArtifactPaths, KubernetesExecutor, PROFILE_SETTING } from './kubernetes/index.js';
import { encodeProfileSnapshot } from './kubernetes/config/index.js';
import { LocalExecutor } from './local/index.js';

/** What every executor may need from the controller that builds it. */
export interface ExecutorDeps {
  dataDir: string;
  logger: Logger;
  /** Overrides the agentctl bundle of every local executor (tests, dev builds). */
  agentctlPath?: string;
  /** Absolute paths in the configured agents' argv (a sandbox keeps them visible). @default found in the config */
  agentPaths?: readonly string[];
  /** Where dist/ (the agentctl builds delivered into Pods) lives. @default found from this module */
  installRoot?: string;
}

interface ExecutorType<C extends ExecutorConfig> {
  create(config: C, deps: ExecutorDeps): Executor;
  /** The executor-specific part of a profile snapshot: what a resume or a replacement is built from. */
  settings(resolved: ResolvedProfile & { executor: C }, deps: ExecutorDeps): Record<string, string>;
}

type Registry = { [T in ExecutorConfig['type']]?: ExecutorType<Extract<ExecutorConfig, { type: T }>> };

const TYPES: Registry = {
  local: {
    create: (config, deps) =>
      new LocalExecutor({
        name: config.name,
        dataDir: deps.dataDir,
        agentctlPath: deps.agentctlPath ?? config.agentctlPath,
        logger: deps.logger,
        sandbox: config.sandbox,
        network: config.network,
        sandboxReadOnlyPaths: deps.agentPaths ?? [],
      }),
    settings: (resolved, deps) => ({ agentctl_path: deps.agentctlPath ?? resolved.executor.agentctlPath }),
  },
  kubernetes: {
    create: (config, deps) =>
      new KubernetesExecutor({
        name: config.name,
        connection: config.connection,
        artifacts: defaultArtifactPaths(deps.installRoot ?? findInstallRoot()),
        logger: deps.logger,
      }),
    settings: (resolved) => {
      // A kubernetes executor is launched through a profile (config validation says so): its Pod
      // template, workspace and scripts are the snapshot every later Pod of the session is built from.
      const profile = resolved.profile?.kubernetes;
      if (!profile) throw new Error(`executor '${resolved.executor.name}' needs a profile with a kubernetes block`);
      return { [PROFILE_SETTING]: encodeProfileSnapshot(profile) };
    },
  },
};

function typeOf<C extends ExecutorConfig>(config: C): ExecutorType<C> | undefined {
  return TYPES[config.type] as ExecutorType<C> | undefined;
}

/** True when this build of Berth can run executors of the entry's type. */
export function isExecutorTypeAvailable(config: ExecutorConfig): boolean {
  return typeOf(config) !== undefined;
}

/** One executor per config entry whose type is available. */
export function createExecutors(config: ResolvedConfig, deps: ExecutorDeps): Map<string, Executor> {
  const out = new Map<string, Executor>();
  const withPaths: ExecutorDeps = { ...deps, agentPaths: deps.agentPaths ?? agentCommandPaths(config) };
  for (const entry of Object.values(config.executors)) {
    const type = typeOf(entry);
    if (type) out.set(entry.name, type.create(entry, withPaths));
  }
  return out;
}

/** The absolute paths among the agents' argv (scripts such as the built-in demo agent). */
function agentCommandPaths(config: ResolvedConfig): string[] {
  const paths = new Set<string>();
  for (const agent of Object.values(config.agents)) for (const arg of agent.command) if (arg.startsWith('/')) paths.add(arg);
  return [...paths];
}

/**
 * The snapshot a launch records on its session: the executor entry, the profile, the profile env and
 * the executor-specific settings, as resolved now. Later Pods/agentctls of the session are built from
 * it, never from a profile edited since. Throws the config error of an unknown name.
 */
export function profileSnapshot(config: ResolvedConfig, name: string, deps: ExecutorDeps): ExecutorProfileSnapshot {
  const resolved = resolveProfile(config, name);
  if (resolved === null) throw new Error(`unknown executor or profile '${name}' (configured: ${launchTargetNames(config).join(', ')})`);
  const type = typeOf(resolved.executor);
  return {
    executor: resolved.executor.name,
    profile: resolved.profile?.name ?? null,
    type: resolved.executor.type,
    settings: type ? type.settings(resolved, deps) : {},
    env: { ...(resolved.profile?.env ?? {}) },
  };
}
