/**
 * Validation of launch requests before anything is recorded or created (pure).
 * @module
 */
import { LaunchValidationError, type LaunchRequest, type RepositoryRef } from './service.js';

export const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

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
