/**
 * The start-up sweep of secrets nothing can use any more: agentctl secrets of instances no runtime
 * row references (a crash between storing and recording them), and repository credentials of
 * sessions that do not exist (a crash before the session row).
 * @module
 */
import type { Inventory } from '../inventory/index.js';
import { secretIds } from './context.js';
import { sessionOfRepoCredential } from './repo-credentials.js';

/** Deletes the orphaned secrets of `store` (see the module comment). */
export async function sweepOrphanSecrets(store: Inventory): Promise<void> {
  const sessions = new Set((await store.listSessions()).map((s) => s.id));
  const referenced = new Set<string>();
  for (const row of await store.listRuntime()) {
    for (const id of Object.values(row.secretRefs)) referenced.add(id);
    const ids = secretIds(row.instanceId);
    referenced.add(ids.authToken);
    referenced.add(ids.bootstrapNonce);
  }
  for (const id of await store.listSecretIds()) {
    if (id.startsWith('agentctl-') && !referenced.has(id)) await store.deleteSecret(id);
    const owner = sessionOfRepoCredential(id);
    if (owner !== null && !sessions.has(owner)) await store.deleteSecret(id);
  }
}
