/**
 * The one place executors are built and profiles resolved, keyed by executor type: the controller
 * asks for "the executor of this config entry", "the profile snapshot of this launch" and "what an
 * executor of this entry can do" (its type's capabilities) and never branches on the type itself.
 * @module
 */
import type { ExecutorConfig, LocalExecutorConfig, ResolvedConfig } from '../config/index.js';
import { findInstallRoot, launchTargetNames, resolveProfile, type ResolvedProfile } from '../config/index.js';
import { ensureInstallationId } from '../shared/installation-id.js';
import type { Logger } from '../shared/logger.js';
import type { Executor, ExecutorCapabilities, ExecutorProfileSnapshot } from '../executors/executor.js';
import { defaultArtifactPaths, KubernetesExecutor, PROFILE_SETTING } from '../executors/kubernetes/index.js';
import { encodeProfileSnapshot } from '../executors/kubernetes/config/index.js';
import { egressSocketPath, encodeNetworkSettings, NETWORK_SETTING } from '../executors/network.js';
import { findOnPath, hostSecretPaths, LocalExecutor, userHomes, type LocalExecutorOptions } from '../executors/local/index.js';

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
  /** The controller's environment (`HOME`, `KUBECONFIG`, `XDG_CONFIG_HOME`). @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /** Paths every local sandbox hides besides its defaults. @default the kubeconfigs and config file of the config */
  sandboxHide?: readonly string[];
  /** The installation id Kubernetes executors stamp on what they create. @default the data dir's (created on first use) */
  installationId?: string;
}

interface ExecutorType<C extends ExecutorConfig> {
  /** What executors of the type can do (their class declares it). */
  capabilities: ExecutorCapabilities;
  create(config: C, deps: ExecutorDeps): Executor;
  /** The executor-specific part of a profile snapshot: what a resume or a replacement is built from. */
  settings(resolved: ResolvedProfile & { executor: C }, deps: ExecutorDeps): Record<string, string>;
}

type Registry = { [T in ExecutorConfig['type']]: ExecutorType<Extract<ExecutorConfig, { type: T }>> };

const TYPES: Registry = {
  local: {
    capabilities: LocalExecutor.capabilities,
    create: (config, deps) => new LocalExecutor(localOptions(config, deps)),
    settings: (resolved, deps) => ({ agentctl_path: deps.agentctlPath ?? resolved.executor.agentctlPath }),
  },
  kubernetes: {
    capabilities: KubernetesExecutor.capabilities,
    create: (config, deps) =>
      new KubernetesExecutor({
        name: config.name,
        connection: config.connection,
        artifacts: defaultArtifactPaths(deps.installRoot ?? findInstallRoot()),
        logger: deps.logger,
        installationId: deps.installationId ?? ensureInstallationId(deps.dataDir),
        egressProxy: config.egressProxy,
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

function typeOf<C extends ExecutorConfig>(config: C): ExecutorType<C> {
  return TYPES[config.type] as ExecutorType<C>;
}

/** What an executor of the config entry can do, known without building one (the dashboard's launch form asks). */
export function executorCapabilities(config: ExecutorConfig): ExecutorCapabilities {
  return typeOf(config).capabilities;
}

/**
 * The metadata key prefixes of every executor type of this build: the inventory persists executor
 * keys under these only. All types, not only the configured ones: a row keeps its keys when its
 * executor leaves the config.
 */
export function metadataKeyPrefixes(): string[] {
  return Object.values(TYPES).map((t) => t.capabilities.metadataKeyPrefix);
}

/** One executor per config entry. */
export function createExecutors(config: ResolvedConfig, deps: ExecutorDeps): Map<string, Executor> {
  const out = new Map<string, Executor>();
  const withPaths = localDeps(config, deps);
  for (const entry of Object.values(config.executors)) out.set(entry.name, typeOf(entry).create(entry, withPaths));
  return out;
}

/** The local executors of `config` alone, built as createExecutors builds them (`berth doctor` probes their sandbox). */
export function createLocalExecutors(config: ResolvedConfig, deps: ExecutorDeps): LocalExecutor[] {
  const withPaths = localDeps(config, deps);
  const out: LocalExecutor[] = [];
  for (const entry of Object.values(config.executors)) if (entry.type === 'local') out.push(new LocalExecutor(localOptions(entry, withPaths)));
  return out;
}

function localOptions(config: LocalExecutorConfig, deps: ExecutorDeps): LocalExecutorOptions {
  return {
    name: config.name,
    dataDir: deps.dataDir,
    agentctlPath: deps.agentctlPath ?? config.agentctlPath,
    logger: deps.logger,
    sandbox: config.sandbox,
    network: config.network,
    sandboxReadOnlyPaths: deps.agentPaths ?? [],
    sandboxHide: [...config.sandboxHide, ...(deps.sandboxHide ?? [])],
    sandboxExpose: config.sandboxExpose,
    egressSocket: egressSocketPath(deps.dataDir),
  };
}

function localDeps(config: ResolvedConfig, deps: ExecutorDeps): ExecutorDeps {
  return { ...deps, agentPaths: deps.agentPaths ?? agentCommandPaths(config, (deps.env ?? process.env).PATH), sandboxHide: deps.sandboxHide ?? configSecretPaths(config, deps.env ?? process.env) };
}

/**
 * What Berth's config says holds credentials, hidden from every local sandbox: each kubernetes
 * executor's kubeconfig, `$KUBECONFIG`'s entries, Berth's config dir and the config file itself.
 */
function configSecretPaths(config: ResolvedConfig, env: Readonly<Record<string, string | undefined>>): string[] {
  return hostSecretPaths({
    env,
    homes: userHomes(env),
    kubeconfigPaths: Object.values(config.executors).map((e) => (e.type === 'kubernetes' ? e.kubeconfigPath : null)),
    configFile: config.source,
  });
}

/** The absolute paths among the agents' argv (scripts such as the built-in demo agent), and where their programs are found on PATH. */
function agentCommandPaths(config: ResolvedConfig, path: string | undefined): string[] {
  const paths = new Set<string>();
  for (const agent of Object.values(config.agents)) {
    for (const arg of agent.command) if (arg.startsWith('/')) paths.add(arg);
    // a program found on PATH, perhaps in the (hidden) home: ~/.local/bin/claude
    const program = findOnPath(agent.command[0] ?? '', path);
    if (program !== null) paths.add(program);
  }
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
  return {
    executor: resolved.executor.name,
    profile: resolved.profile?.name ?? null,
    type: resolved.executor.type,
    settings: {
      ...typeOf(resolved.executor).settings(resolved, deps),
      // the network policy the session launched with stays its own, as the rest of the snapshot
      ...(resolved.profile?.network ? { [NETWORK_SETTING]: encodeNetworkSettings(resolved.profile.network) } : {}),
    },
    env: { ...(resolved.profile?.env ?? {}) },
  };
}
