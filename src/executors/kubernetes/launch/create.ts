/**
 * Creating a Pod or PVC so that an ambiguous outcome (timeout, 5xx, a cut connection: the create may
 * have committed) is reconciled by a GET and adopted only when the object carries this attempt's
 * create nonce and exactly our ownership labels (spec §4.5). A definite error (409 AlreadyExists,
 * other 4xx, an admission denial) never adopts a same-name object.
 * @module
 */
import type { V1ObjectMeta } from '@kubernetes/client-node';
import { LaunchError } from '../../launch-kit/index.js';
import { ANNOTATION } from '../constants.js';
import { isAmbiguousCreateError, ownershipLabelProblems } from '../compose/index.js';
import { isAlreadyExists } from '../kube/index.js';

/** How long the reconciling GET may take, detached from the launch's signal (spec §2.5). */
const RECONCILE_TIMEOUT_MS = 30_000;

interface CreateSpec<T extends { metadata?: V1ObjectMeta }> {
  kind: 'Pod' | 'PVC' | 'NetworkPolicy';
  stage: string;
  desired: T;
  create: () => Promise<T>;
  get: (signal: AbortSignal) => Promise<T | undefined>;
}

/** Creates `desired`; returns the object the API server stored (with its UID). */
export async function createOwned<T extends { metadata?: V1ObjectMeta }>(spec: CreateSpec<T>): Promise<T> {
  const name = spec.desired.metadata?.name ?? '?';
  const namespace = spec.desired.metadata?.namespace ?? '?';
  let created: T;
  try {
    created = await spec.create();
  } catch (err) {
    if (isAlreadyExists(err)) {
      throw new LaunchError(
        spec.stage,
        'AlreadyExists',
        `${spec.kind} ${namespace}/${name} already exists and was not created by this launch; Berth never adopts it (remove it, or check whether another controller runs this session)`,
        { cause: err },
      );
    }
    if (!isAmbiguousCreateError(err)) throw err;
    const found = await spec.get(AbortSignal.timeout(RECONCILE_TIMEOUT_MS)).catch((getErr: unknown) => {
      throw new LaunchError(spec.stage, 'ReconcileFailed', `create ${spec.kind} ${namespace}/${name} had an ambiguous outcome and reading it back failed: ${String(getErr)}`, { cause: err });
    });
    if (found === undefined) {
      throw new LaunchError(
        spec.stage,
        'ApiServerRefused',
        `${spec.kind} ${namespace}/${name} was not created: the API server refused or did not answer the create (${messageOf(err)}) and reading it back found nothing, so nothing is left behind; ` +
          "check the API server's health (kubectl get --raw '/readyz?verbose') and launch again",
        { cause: err },
      );
    }
    const problems = adoptionProblems(spec.desired.metadata ?? {}, found.metadata ?? {});
    if (problems.length > 0) {
      throw new LaunchError(spec.stage, 'ForeignObject', `${spec.kind} ${namespace}/${name} exists but is not the one this launch created (${problems.join('; ')}); it is left alone`, {
        cause: err,
      });
    }
    created = found;
  }
  if (!created.metadata?.uid || created.metadata.name !== name || created.metadata.namespace !== namespace) {
    throw new LaunchError(spec.stage, 'IdentityIncomplete', `created ${spec.kind} ${namespace}/${name} came back without its UID or under another name`);
  }
  return created;
}

/** Why a found object may not be adopted as ours; empty when it carries our nonce and labels. */
function adoptionProblems(desired: V1ObjectMeta, found: V1ObjectMeta): string[] {
  const problems: string[] = [];
  const want = desired.annotations?.[ANNOTATION.createNonce];
  if (want === undefined || found.annotations?.[ANNOTATION.createNonce] !== want) problems.push('its create nonce differs');
  problems.push(...ownershipLabelProblems(found.labels, desired.labels ?? {}));
  if (found.deletionTimestamp) problems.push('it is being deleted');
  return problems;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
