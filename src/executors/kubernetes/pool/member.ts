/**
 * One warm pool member made: its row first (`creating`, the bootstrap nonce stored encrypted), then
 * the PVC and the Pod exactly as a launch makes them (every create checkpointed into the row),
 * agentctl delivered and started with no secret and no session — and no repository, or with a
 * repository pool a clone of its repository (the setup script run on it) — and its health
 * answered through a forward; only then is the row `ready` (claimable). On any failure the member's
 * objects are deleted by UID and its row with them.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { CreateInstanceRequest } from '../../executor.js';
import { createNonce, resourceNames, type ResourceIdentity } from '../compose/index.js';
import { profileHash } from '../config/index.js';
import { initialMetadata, KubeLaunchState } from '../launch/context.js';
import { PodStart } from '../launch/start-pod.js';
import { provisionStorage } from '../launch/storage.js';
import { encodeKubernetesMetadata } from '../metadata.js';
import { memberHash, type PoolContext } from './context.js';
import { memberTargets, MEMBER_NONCE, retireMember } from './retire.js';

/** The checkpoint state of a member's row metadata once it is claimable. */
const MEMBER_READY = 'pool_ready';

/** `pool-` and 20 hex digits: a label value, and never a session id (those are UUIDs). */
function memberId(): string {
  return `pool-${randomBytes(10).toString('hex')}`;
}

/**
 * Makes one member and leaves it `ready`; throws (having deleted what it made) when that fails.
 * `stop` (the pool's, which lives as long as the executor) aborts it through a signal of its own:
 * what the launch stages hang on it goes with the member, not onto the long-lived one.
 */
export async function provisionMember(p: PoolContext, stop: AbortSignal): Promise<string> {
  const own = new AbortController();
  const abort = (): void => own.abort(stop.reason);
  stop.addEventListener('abort', abort, { once: true });
  try {
    return await makeMember(p, own.signal);
  } finally {
    stop.removeEventListener('abort', abort);
  }
}

async function makeMember(p: PoolContext, signal: AbortSignal): Promise<string> {
  const id = memberId();
  const identity: ResourceIdentity = { instanceId: id, sessionId: id, executor: p.env.executorName, profile: p.profileName };
  const meta = initialMetadata(identity, p.namespace, p.profile);
  await p.store.insertPoolMember({
    id,
    executor: identity.executor,
    profile: p.profileName,
    profileHash: memberHash(p, profileHash(p.profile)),
    metadata: encodeKubernetesMetadata(meta, 'pool_creating'),
    secretRefs: { [MEMBER_NONCE]: `${id}-nonce` },
  });
  const nonce = createNonce(p.env.random);
  const l = new KubeLaunchState(p.env, memberRequest(p, id, signal), p.profile, identity, meta);
  const pod = new PodStart(l, { name: resourceNames(id).pod, nonce, clone: p.repository !== null, healthOnly: true });
  try {
    await p.store.putSecret(`${id}-nonce`, nonce);
    await provisionStorage(l);
    await pod.ready();
    await pod.bootstrap();
    await pod.healthy();
    const ready = await p.store.updatePoolMember(id, { state: 'ready', metadata: encodeKubernetesMetadata(l.meta, MEMBER_READY) }, { state: 'creating' });
    if (ready === null) throw new Error(`pool member ${id}: its row changed while it was made`);
    return id;
  } catch (err) {
    pod.abandon();
    await retireMember(p, id, memberTargets(l.meta));
    throw err;
  } finally {
    pod.close();
  }
}

/** The launch request a member is made with: its own identity, no repository, env or secret; checkpoints go to its row. */
function memberRequest(p: PoolContext, id: string, signal: AbortSignal): CreateInstanceRequest {
  return {
    identity: { instanceId: id, sessionId: id, taskId: id, environmentId: id },
    repository: p.repository === null ? {} : { url: p.repository.url, ...(p.repository.branch !== null ? { branch: p.repository.branch } : {}) },
    env: {},
    secretEnv: {},
    profile: { executor: p.env.executorName, profile: p.profileName, type: 'kubernetes', settings: p.settings, env: {} },
    onStage: () => undefined,
    checkpointRuntimeInventory: async (c) => {
      const row = await p.store.updatePoolMember(id, { metadata: c.metadata }, { state: 'creating' });
      if (row === null) throw new Error(`pool member ${id}: its row is gone (the pool was removed while the member was made)`);
    },
    signal,
  };
}
