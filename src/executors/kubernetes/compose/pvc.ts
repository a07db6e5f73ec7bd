/**
 * Composes the managed workspace PVC (spec §3.6).
 * @module
 */
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { ANNOTATION } from '../constants.js';
import type { WorkspaceConfig } from '../types.js';
import { ComposeFieldError } from './errors.js';
import { ownershipLabels, type ResourceIdentity } from './identity.js';
import { requireDns1123Label, requireDns1123Subdomain } from './validate.js';

interface PvcComposeInput {
  workspace: WorkspaceConfig;
  identity: ResourceIdentity;
  namespace: string;
  /** `resourceNames(instanceId).pvc`. */
  name: string;
  /** A fresh {@link createNonce}, different from the Pod's. */
  createNonce: string;
}

/** The claim Berth creates for `managed_pvc`. Throws a {@link ComposeFieldError} for any other mode. */
export function composePvc(input: PvcComposeInput): V1PersistentVolumeClaim {
  const ws = input.workspace;
  if (ws.mode !== 'managed_pvc') throw new ComposeFieldError('profile.workspace.mode', 'must be managed_pvc to create a claim');
  if (ws.size === null || ws.size === '') throw new ComposeFieldError('profile.workspace.size', 'is required for workspace mode managed_pvc');
  requireDns1123Subdomain('pvc.metadata.name', input.name);
  requireDns1123Label('pvc.metadata.namespace', input.namespace);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: input.name,
      namespace: input.namespace,
      labels: ownershipLabels(input.identity),
      annotations: { [ANNOTATION.createNonce]: input.createNonce },
    },
    spec: {
      accessModes: ws.accessModes.length > 0 ? [...ws.accessModes] : ['ReadWriteOnce'],
      volumeMode: 'Filesystem',
      resources: { requests: { storage: ws.size } },
      ...(ws.storageClass !== null ? { storageClassName: ws.storageClass } : {}),
    },
  };
}
