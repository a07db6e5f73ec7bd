/**
 * Validation of launch requests before anything is recorded or created (pure).
 * @module
 */
import { approvedSecretEnv, type ResolvedProfile } from '../config/index.js';
import { LaunchValidationError, type LaunchRequest, type RepositoryRef } from './service.js';

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Checks a launch's `secretEnv` names against the ones `berth.yaml` approves for its target
 * (`secret_env` of the profile and of its executor); throws LaunchValidationError naming
 * `secretEnv.NAME`. A name that is not approved gets the same answer whether or not serve's
 * environment has it, so a launch cannot probe that environment; an approved name that is unset may
 * say so (an admin listed it).
 */
export function checkSecretEnv(names: readonly string[], target: ResolvedProfile | null, isSet: (name: string) => boolean): void {
  const approved = new Set(target === null ? [] : approvedSecretEnv(target));
  for (const name of names) {
    if (typeof name !== 'string' || !ENV_NAME.test(name)) throw new LaunchValidationError(`secretEnv.${String(name)}`, 'must be a valid environment variable name');
    if (!approved.has(name)) throw new LaunchValidationError(`secretEnv.${name}`, `is not an approved secret for ${describeTarget(target)}`);
    if (!isSet(name)) throw new LaunchValidationError(`secretEnv.${name}`, 'is not set in the controller environment');
  }
}

function describeTarget(target: ResolvedProfile | null): string {
  if (target === null) return 'this launch';
  const executor = `executors.${target.executor.name}.secret_env`;
  return target.profile === null
    ? `executor '${target.executor.name}' (add it to ${executor} in berth.yaml)`
    : `profile '${target.profile.name}' (add it to profiles.${target.profile.name}.secret_env or ${executor} in berth.yaml)`;
}

/**
 * Checks and copies a repository reference; throws LaunchValidationError naming the field. The
 * repository of a launch: exactly one of url and path, or — where the executor allows an empty
 * workspace (`optional`: Kubernetes) — none at all (`{}`).
 */
export function validateRepositoryRef(repo: LaunchRequest['repository'] | undefined, opts: { optional?: boolean } = {}): RepositoryRef {
  if ((repo === undefined || repo === null) && opts.optional) return {};
  if (repo === undefined || repo === null || typeof repo !== 'object') throw new LaunchValidationError('repository', 'is required (url or path)');
  const out: RepositoryRef = {};
  if (repo.url !== undefined) {
    if (typeof repo.url !== 'string' || repo.url.trim() === '') throw new LaunchValidationError('repository.url', 'must be a non-empty string');
    out.url = repo.url;
  }
  if (repo.path !== undefined) {
    if (typeof repo.path !== 'string' || repo.path.trim() === '') throw new LaunchValidationError('repository.path', 'must be a non-empty string');
    out.path = repo.path;
  }
  if (out.url !== undefined && out.path !== undefined) throw new LaunchValidationError('repository', 'set either url or path, not both');
  if (out.url === undefined && out.path === undefined && !(opts.optional && repo.branch === undefined)) throw new LaunchValidationError('repository', 'is required (url or path)');
  if (repo.branch !== undefined) {
    if (typeof repo.branch !== 'string' || repo.branch.trim() === '') throw new LaunchValidationError('repository.branch', 'must be a non-empty string');
    out.branch = repo.branch;
  }
  return out;
}
