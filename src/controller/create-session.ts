/**
 * Recording a checked launch as a new `launching` session: the clone credential (if any) goes to
 * the secret store first, then the session row; a name is taken under the name's lock, so two
 * launches cannot both take it while the store is read.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { SessionRecord } from '../inventory/index.js';
import type { ManagerContext } from './context.js';
import { encodeRepoCredentials, repoCredentialId } from './repo-credentials.js';
import { LaunchValidationError } from './service.js';
import type { CheckedLaunch } from './validate.js';

/** Creates the session of `launch` (named `name`, unless taken: LaunchValidationError). */
export async function createSession(ctx: ManagerContext, name: string | null, launch: CheckedLaunch): Promise<SessionRecord> {
  if (name === null) return insert(ctx, null, launch);
  return ctx.locks.run(`\0name:${name}`, async () => {
    const namesake = (await ctx.store.listSessions()).find((s) => s.name === name);
    if (namesake) throw new LaunchValidationError('name', `'${name}' is taken by session ${namesake.id}; session names are unique`);
    return insert(ctx, name, launch);
  });
}

/**
 * Credentials in the repository URL were split off by the check: they never reach the session row,
 * the view or an event, only the secret store.
 */
async function insert(ctx: ManagerContext, name: string | null, launch: CheckedLaunch): Promise<SessionRecord> {
  const id = `s-${randomBytes(5).toString('hex')}`;
  const { store } = ctx;
  // Stored before the session row: a crash in between leaves an orphan the start-up sweep removes,
  // never a session that needs a credential which was not stored.
  if (launch.credentials) await store.putSecret(repoCredentialId(id), encodeRepoCredentials(launch.credentials));
  try {
    return await store.insertSession({
      id,
      name,
      executor: launch.target,
      agent: launch.agent,
      repository: launch.repository,
      request: launch.request,
      state: 'launching',
      error: null,
      stages: [],
      workspacePath: null,
    });
  } catch (err) {
    if (launch.credentials) await store.deleteSecret(repoCredentialId(id)).catch(() => undefined);
    throw err;
  }
}
