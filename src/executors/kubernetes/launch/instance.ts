/**
 * The connected instance the manager gets: clients that talk through the supervised forwards,
 * the metadata to record at `ready`, and a close() that releases the forwards (the Pod keeps
 * running).
 * @module
 */
import type { CreateInstanceRequest, ExecutorInstance, InstanceSecrets } from '../../executor.js';
import { PATH } from '../constants.js';
import { encodeKubernetesMetadata } from '../metadata.js';
import type { Connected } from './connect.js';
import type { KubeLaunchState } from './context.js';

/** Env of every process of the instance: profile env, launch env, approved secrets, Berth's own keys. */
export function instanceEnv(req: Pick<CreateInstanceRequest, 'profile' | 'env' | 'secretEnv' | 'identity'>): Record<string, string> {
  return {
    ...req.profile.env,
    ...req.env,
    ...req.secretEnv,
    BERTH_SESSION_ID: req.identity.sessionId,
    BERTH_WORKSPACE: PATH.workspace,
  };
}

export function buildInstance(l: KubeLaunchState, c: Connected, secrets: InstanceSecrets, revived: boolean, agentctlCommand: readonly string[]): ExecutorInstance {
  let closed: Promise<void> | null = null;
  return {
    identity: l.req.identity,
    executor: l.env.executorName,
    workspacePath: PATH.workspace,
    metadata: encodeKubernetesMetadata(l.meta, 'ready'),
    secrets,
    control: c.control,
    client: c.client,
    revived,
    agentctlCommand,
    close: () => {
      closed ??= Promise.allSettled(c.forwards.map((f) => f.close())).then(() => undefined);
      return closed;
    },
  };
}
