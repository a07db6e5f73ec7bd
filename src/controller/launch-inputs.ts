/**
 * What a session launch reads before it asks the executor for anything: the repository to clone,
 * the values of the session's secret env (from serve's environment, now), the stored clone
 * credential, and the agentctl secrets a recorded instance reconnects with. A missing piece is a
 * LaunchError of the `initialize` stage; nothing has been created yet.
 * @module
 */
import type { ExecutorProfileSnapshot, InstanceSecrets, RepositoryCredentials, RepositorySpec } from '../executors/executor.js';
import { withEgressEnv } from './egress.js';
import { INIT_STAGE, LaunchError } from '../executors/launch-kit/index.js';
import type { RuntimeRecord, SessionRecord } from '../inventory/index.js';
import { SECRET_REF, type ManagerContext } from './context.js';
import { decodeRepoCredentials, repoCredentialId } from './repo-credentials.js';

/** The repository as the executor gets it (only the fields the session set). */
export function repositorySpec(session: SessionRecord): RepositorySpec {
  const { url, path, branch } = session.repository;
  return { ...(url !== undefined ? { url } : {}), ...(path !== undefined ? { path } : {}), ...(branch !== undefined ? { branch } : {}) };
}

/**
 * The values of the secret names the session recorded, read from serve's environment now. The
 * names were checked against `secret_env` at launch and stay approved for this session, as the
 * rest of its profile snapshot does: an edit of berth.yaml applies to new launches.
 */
function resolveSecretEnv(ctx: ManagerContext, session: SessionRecord): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of session.request.secretEnv) {
    const value = ctx.secretSource(name);
    if (value === undefined) throw new LaunchError(INIT_STAGE, 'SecretMissing', `secretEnv.${name}: is not set in the controller environment`);
    out[name] = value;
  }
  return out;
}

/** The secret environment of a launch: the session's secret env with its egress settings applied (egress.ts). */
export function launchSecretEnv(ctx: ManagerContext, session: SessionRecord, profile: ExecutorProfileSnapshot): Promise<Record<string, string>> {
  return withEgressEnv(ctx, session.id, profile, resolveSecretEnv(ctx, session));
}

/** The clone credential the session stored (encrypted) at launch. */
export async function revealRepoCredentials(ctx: ManagerContext, sessionId: string): Promise<RepositoryCredentials> {
  try {
    return decodeRepoCredentials(await ctx.store.revealSecret(repoCredentialId(sessionId)));
  } catch (err) {
    throw new LaunchError(INIT_STAGE, 'CredentialsMissing', `repository.url: the stored credential of session ${sessionId} cannot be read (remove the session and launch again)`, {
      cause: err,
    });
  }
}

/** The agentctl token and nonce a runtime row refers to. */
export async function revealInstanceSecrets(ctx: ManagerContext, row: RuntimeRecord): Promise<InstanceSecrets> {
  const authId = row.secretRefs[SECRET_REF.authToken];
  const nonceId = row.secretRefs[SECRET_REF.bootstrapNonce];
  if (authId === undefined || nonceId === undefined) {
    throw new LaunchError(INIT_STAGE, 'SecretsMissing', `runtime row of session ${row.sessionId} has no agentctl secrets (remove the session and launch again)`);
  }
  return { authToken: await ctx.store.revealSecret(authId), bootstrapNonce: await ctx.store.revealSecret(nonceId) };
}
