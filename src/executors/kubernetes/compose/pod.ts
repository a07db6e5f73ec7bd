/**
 * Composes the session Pod from the profile's template (spec §3.2, Berth's names): a deep copy of
 * the template with Berth's labels, invariants, reserved volumes and the main container's bootstrap.
 * Pure: the template is never mutated, nothing is read from the cluster.
 * @module
 */
import type { V1Container, V1Pod, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import { AGENTCTL_PORT, AGENTCTL_PORT_NAME, ANNOTATION, PATH, SCHEDULING_GATE, VOLUME } from '../constants.js';
import type { KubernetesProfile } from '../types.js';
import { ComposeFieldError } from './errors.js';
import { ownershipLabels, type ResourceIdentity } from './identity.js';
import { applyPodDefaults } from './secure-defaults.js';
import { startScript } from './start-script.js';
import { requireDns1123Label, requireDns1123Subdomain } from './validate.js';

export interface PodComposeInput {
  profile: KubernetesProfile;
  identity: ResourceIdentity;
  namespace: string;
  /** `resourceNames(instanceId).pod`, or the recorded name for a replacement Pod. */
  name: string;
  /** managed_pvc: the claim Berth created (`resourceNames(instanceId).pvc`). Ignored otherwise. */
  managedPvcName?: string | null;
  /** A fresh {@link createNonce} for this create. */
  createNonce: string;
  /** The main container's script. @default startScript() */
  startScript?: string;
  /**
   * Created behind Berth's scheduling gate ({@link SCHEDULING_GATE}, after the template's own
   * gates): the Pod of a new managed claim, created while the claim binds (launch/gate.ts).
   */
  schedulingGate?: boolean;
}

/** The mounts Berth adds to the main container, in this order. */
const RESERVED_MOUNTS: readonly V1VolumeMount[] = Object.freeze([
  { name: VOLUME.runtime, mountPath: PATH.runtimeDir },
  { name: VOLUME.auth, mountPath: PATH.authDir },
  { name: VOLUME.workspace, mountPath: PATH.workspace },
]);

/** The three reserved volumes for the profile's workspace mode. */
function reservedVolumes(profile: KubernetesProfile, managedPvcName: string | null): V1Volume[] {
  const ws = profile.workspace;
  let workspace: V1Volume;
  switch (ws.mode) {
    case 'managed_pvc':
      if (managedPvcName === null) throw new ComposeFieldError('pod.managed_pvc_name', 'is required for workspace mode managed_pvc');
      requireDns1123Subdomain('pod.managed_pvc_name', managedPvcName);
      workspace = { name: VOLUME.workspace, persistentVolumeClaim: { claimName: managedPvcName } };
      break;
    case 'existing_claim':
      if (ws.claimName === null) throw new ComposeFieldError('profile.workspace.claim_name', 'is required for workspace mode existing_claim');
      requireDns1123Subdomain('profile.workspace.claim_name', ws.claimName);
      workspace = { name: VOLUME.workspace, persistentVolumeClaim: { claimName: ws.claimName } };
      break;
    case 'empty_dir':
      workspace = { name: VOLUME.workspace, emptyDir: {} };
      break;
    default:
      throw new ComposeFieldError('profile.workspace.mode', `${String((ws as { mode: unknown }).mode)} is unsupported`);
  }
  return [
    { name: VOLUME.runtime, emptyDir: {} },
    // tmpfs: the nonce, the clone credential and the private HOME never touch the node's disk.
    { name: VOLUME.auth, emptyDir: { medium: 'Memory' } },
    workspace,
  ];
}

/** The agentctl port entry of the main container. agentctl itself binds 127.0.0.1; only port-forward reaches it. */
const AGENTCTL_CONTAINER_PORT = Object.freeze({ name: AGENTCTL_PORT_NAME, containerPort: AGENTCTL_PORT, protocol: 'TCP' });

/** Composes the Pod. Throws a {@link ComposeFieldError} naming the field on bad input. */
export function composePod(input: PodComposeInput): V1Pod {
  const { profile } = input;
  requireDns1123Subdomain('pod.metadata.name', input.name);
  requireDns1123Label('pod.metadata.namespace', input.namespace);
  const labels = ownershipLabels(input.identity);
  const arch = profile.platform === 'linux/arm64' ? 'arm64' : profile.platform === 'linux/amd64' ? 'amd64' : null;
  if (arch === null) throw new ComposeFieldError('profile.platform', 'must be linux/amd64 or linux/arm64');

  // structuredClone: the result shares nothing with the profile, so later edits cannot leak back.
  const template = structuredClone(profile.template);
  const spec = template.spec;
  if (spec === undefined || !Array.isArray(spec.containers)) throw new ComposeFieldError('profile.pod_template.spec.containers', 'must be a list of containers');
  const main = spec.containers.find((c) => c.name === profile.mainContainer);
  if (main === undefined) throw new ComposeFieldError('profile.main_container', `no container named "${profile.mainContainer}" in the template`);

  const metadata = template.metadata ?? {};
  const pod: V1Pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      ...metadata,
      name: input.name,
      namespace: input.namespace,
      labels: { ...(metadata.labels ?? {}), ...labels },
      annotations: { ...(metadata.annotations ?? {}), [ANNOTATION.createNonce]: input.createNonce },
    },
    spec,
  };
  // A PodTemplate's metadata may carry fields that make no sense on a fresh Pod.
  for (const key of ['generateName', 'uid', 'resourceVersion', 'creationTimestamp', 'ownerReferences', 'finalizers', 'managedFields'] as const) {
    delete pod.metadata![key];
  }

  spec.restartPolicy = 'Always';
  spec.os = { name: 'linux' };
  spec.nodeSelector = { ...(spec.nodeSelector ?? {}), 'kubernetes.io/os': 'linux', 'kubernetes.io/arch': arch };
  // Only when unset: an explicit `true` in the template is kept (and warned about by config).
  spec.automountServiceAccountToken ??= false;
  spec.volumes = [...(spec.volumes ?? []), ...reservedVolumes(profile, input.managedPvcName ?? null)];
  // Berth's gate is Berth's alone: a template that names it would keep a Pod gated, or let Berth lift an operator's gate.
  const gates = (spec.schedulingGates ?? []).filter((g) => g.name !== SCHEDULING_GATE);
  if (input.schedulingGate === true) gates.push({ name: SCHEDULING_GATE });
  if (gates.length > 0) spec.schedulingGates = gates;
  else delete spec.schedulingGates;
  setupMainContainer(main, input.startScript ?? startScript());
  applyPodDefaults(spec, profile.mainContainer);
  return pod;
}

function setupMainContainer(main: V1Container, script: string): void {
  main.command = ['sh', '-c'];
  main.args = [script];
  main.workingDir = PATH.workspace;
  // A failed prepare.sh prints its last lines before the start command exits: the kubelet then
  // copies them into the container's terminated state, where a launch reads them without an exec.
  main.terminationMessagePolicy ??= 'FallbackToLogsOnError';
  main.ports = [...(main.ports ?? []), { ...AGENTCTL_CONTAINER_PORT }];
  main.volumeMounts = [...(main.volumeMounts ?? []), ...RESERVED_MOUNTS.map((m) => ({ ...m }))];
}
