/**
 * Resolving the name a launch gives (`--executor NAME`): a profile, or an executor entry used
 * directly. The one lookup the controller uses for launches, resumes and recovery.
 * @module
 */
import type { IdlePolicy } from './idle.js';
import { ownValue } from '../shared/own.js';
import type { ExecutorConfig, ProfileConfig, ResolvedConfig } from './config.js';

export interface ResolvedProfile {
  /** The executor entry the launch runs on. */
  executor: ExecutorConfig;
  /** The profile, when `name` named one (null: the executor entry itself). */
  profile: ProfileConfig | null;
}

/** The profile or executor entry called `name`, or null when there is none. */
export function resolveProfile(config: ResolvedConfig, name: string): ResolvedProfile | null {
  const profile = ownValue(config.profiles, name);
  if (profile) {
    const executor = ownValue(config.executors, profile.executor);
    return executor ? { executor, profile } : null;
  }
  const executor = ownValue(config.executors, name);
  return executor ? { executor, profile: null } : null;
}

/**
 * The secret names a launch of `resolved` may pass: those its profile lists and those its executor
 * lists (`secret_env`), in that order, each once.
 */
export function approvedSecretEnv(resolved: ResolvedProfile): string[] {
  return [...new Set([...(resolved.profile?.secretEnv ?? []), ...resolved.executor.secretEnv])];
}

/** Every name a launch may give, for error messages. */
export function launchTargetNames(config: ResolvedConfig): string[] {
  return [...Object.keys(config.executors), ...Object.keys(config.profiles)];
}

/** The idle policy of launch target `name`: its profile's `idle`, else its executor's; null: never suspended. */
export function idlePolicy(config: ResolvedConfig, name: string): IdlePolicy | null {
  const resolved = resolveProfile(config, name);
  return resolved?.profile?.idle ?? resolved?.executor.idle ?? null;
}
