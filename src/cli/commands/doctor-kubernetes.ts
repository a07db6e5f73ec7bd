/**
 * `berth doctor`'s Kubernetes part: which executors and profiles of the config to check (all of
 * them, quickly, by default; one with `--executor NAME`), run by the Kubernetes executor's own
 * doctor (`executors/kubernetes/doctor.ts`). Doctor reads the config itself: it needs no serve.
 * @module
 */
import { launchTargetNames, resolveProfile, type ResolvedConfig } from '../../config/index.js';
import { kubernetesDoctor, type DoctorTarget } from '../../executors/kubernetes/index.js';
import { readInstallationId } from '../../shared/installation-id.js';
import { UsageError } from '../exit-codes.js';
import type { Check } from '../types.js';

/** Request timeout of the quick check of every executor (a plain `berth doctor` must not hang on one cluster). */
const QUICK_TIMEOUT_SECONDS = 10;

/** Every kubernetes executor with all its profiles. */
export function allKubernetesTargets(config: ResolvedConfig): DoctorTarget[] {
  return Object.values(config.executors).flatMap((e) =>
    e.type !== 'kubernetes'
      ? []
      : [
          {
            executor: e.name,
            connection: e.connection,
            profiles: Object.values(config.profiles).flatMap((p) => (p.executor === e.name && p.kubernetes ? [{ name: p.name, profile: p.kubernetes, pooled: (p.pool?.size ?? 0) > 0, networked: p.network !== undefined }] : [])),
          },
        ],
  );
}

/**
 * The target `--executor NAME` names: a kubernetes executor (its connection; the permissions its
 * profiles need) or a profile of one (also its storage and dry-run creates). Null for a local one.
 * @throws UsageError for a name the config does not have.
 */
export function namedKubernetesTarget(config: ResolvedConfig, name: string): DoctorTarget | null {
  const resolved = resolveProfile(config, name);
  if (resolved === null) throw new UsageError(`doctor --executor: '${name}' is not an executor or profile of the config (configured: ${launchTargetNames(config).join(', ')})`, 'doctor');
  if (resolved.executor.type !== 'kubernetes') return null;
  const executor = resolved.executor;
  const kube = resolved.profile?.kubernetes;
  if (resolved.profile && kube) return { executor: executor.name, connection: executor.connection, profiles: [{ name: resolved.profile.name, profile: kube, pooled: (resolved.profile.pool?.size ?? 0) > 0, networked: resolved.profile.network !== undefined }] };
  const all = allKubernetesTargets(config).find((t) => t.executor === executor.name);
  // the executor alone: no dry-run, but the permissions are those its profiles need
  return {
    executor: executor.name,
    connection: executor.connection,
    profiles: [],
    workspaceModes: (all?.profiles ?? []).map((p) => p.profile.workspace.mode),
    pooled: (all?.profiles ?? []).some((p) => p.pooled === true),
    networked: (all?.profiles ?? []).some((p) => p.networked === true),
  };
}

/**
 * Runs the targets in parallel; their checks in config order. The installation id that tells
 * foreign objects: `installationId` when the store holds it (Postgres), else the data dir's.
 */
export async function kubernetesChecks(
  targets: readonly DoctorTarget[],
  opts: { env: NodeJS.ProcessEnv; quick: boolean; dataDir?: string; installationId?: string | null },
): Promise<Check[]> {
  const installationId = opts.installationId !== undefined ? opts.installationId : opts.dataDir === undefined ? null : installationIdOf(opts.dataDir);
  const results = await Promise.all(
    targets.map((t) => kubernetesDoctor(t, { env: opts.env, installationId, ...(opts.quick ? { maxRequestTimeoutSeconds: QUICK_TIMEOUT_SECONDS } : {}) })),
  );
  return results.flat();
}

/** The data dir's installation id; null when it has none yet or its file is unreadable (berth serve then refuses to start, naming it). */
function installationIdOf(dataDir: string): string | null {
  try {
    return readInstallationId(dataDir);
  } catch {
    return null;
  }
}
