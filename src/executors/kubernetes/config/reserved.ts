/**
 * Reserved-field rules of a Pod template (spec §3.1, Berth's names): everything composition sets
 * itself — identity metadata, ownership labels, placement by platform, Berth's volumes, mounts,
 * port, environment and the main container's entrypoint — must not be set by a template, so a
 * composed Pod never silently overrides (or is overridden by) the user's setting. Built from the
 * same constants composition uses (STYLE E8).
 * @module
 */
import { posix } from 'node:path';
import type { V1Container, V1EphemeralContainer, V1NodeSelectorTerm, V1ObjectMeta, V1PodSpec, V1PodTemplateSpec } from '@kubernetes/client-node';
import {
  AGENTCTL_PORT,
  AGENTCTL_PORT_NAME,
  BERTH_KEY_PREFIX,
  RESERVED_APP_LABELS,
  RESERVED_ENV_NAMES,
  RESERVED_ENV_PREFIXES,
  RESERVED_MOUNT_PATHS,
  VOLUME,
} from '../constants.js';
import { ConfigFieldError } from '../../../shared/config-field-error.js';
import { isLabelValue, isQualifiedName } from './identifiers.js';
import { field, item } from './paths.js';

const RESERVED = 'is reserved for Berth';

/** Object metadata the API server or composition owns (names, identity, lifecycle). */
const RESERVED_METADATA_FIELDS = [
  'name',
  'generateName',
  'namespace',
  'uid',
  'resourceVersion',
  'generation',
  'creationTimestamp',
  'deletionTimestamp',
  'deletionGracePeriodSeconds',
  'ownerReferences',
  'finalizers',
  'managedFields',
  'selfLink',
] as const;

/** Pod spec fields composition sets: restarts are agentctl's job, placement follows the platform. */
const RESERVED_POD_SPEC_FIELDS = ['restartPolicy', 'nodeName', 'os'] as const;

/** Node labels composition selects on from the profile's platform. */
const RESERVED_NODE_LABELS: readonly string[] = ['kubernetes.io/os', 'kubernetes.io/arch'];

/** Fields of the main container that composition replaces with the bootstrap wait loop. */
const RESERVED_MAIN_CONTAINER_FIELDS = ['command', 'args', 'workingDir'] as const;

const RESERVED_VOLUMES: readonly string[] = Object.values(VOLUME);
const CONTAINER_LISTS = ['initContainers', 'containers', 'ephemeralContainers'] as const;

export function isReservedEnvName(name: string): boolean {
  return RESERVED_ENV_NAMES.includes(name) || RESERVED_ENV_PREFIXES.some((p) => name.startsWith(p));
}

export function isReservedVolumeName(name: string): boolean {
  return RESERVED_VOLUMES.includes(name);
}

/** Whether a mount or device path lies at or below a reserved path, after cleaning (`/a/../workspace/`). */
export function isReservedPath(path: string): boolean {
  const clean = posix.resolve('/', path);
  return RESERVED_MOUNT_PATHS.some((base) => clean === base || clean.startsWith(`${base}/`));
}

/** Label and annotation keys a template may not set. */
function isReservedLabelKey(key: string): boolean {
  return RESERVED_APP_LABELS.includes(key) || key.startsWith(BERTH_KEY_PREFIX);
}

/**
 * Throws a ConfigFieldError naming the first reserved or invalid field. `root` is the template's
 * path (`profiles.k8s.kubernetes.pod_template`, or `….template` inside a PodTemplate).
 */
export function checkReservedFields(template: V1PodTemplateSpec, root: string, mainContainer: string, file: string | null = null): void {
  const fail = (at: string, detail: string) => new ConfigFieldError(at, detail, file);
  if (template.metadata !== undefined) checkMetadata(template.metadata, field(root, 'metadata'), fail);
  if (template.spec !== undefined) checkSpec(template.spec, field(root, 'spec'), mainContainer, fail);
}

type Fail = (at: string, detail: string) => ConfigFieldError;

function checkMetadata(meta: V1ObjectMeta, path: string, fail: Fail): void {
  for (const key of RESERVED_METADATA_FIELDS) if (meta[key] !== undefined) throw fail(field(path, key), RESERVED);
  for (const [key, value] of Object.entries(meta.labels ?? {})) {
    const at = field(field(path, 'labels'), key);
    if (isReservedLabelKey(key)) throw fail(at, RESERVED);
    if (!isQualifiedName(key)) throw fail(at, 'must be a valid label key');
    if (!isLabelValue(value)) throw fail(at, 'must be a valid label value (up to 63 letters, digits, "-", "_" or ".")');
  }
  for (const key of Object.keys(meta.annotations ?? {})) {
    const at = field(field(path, 'annotations'), key);
    if (key.startsWith(BERTH_KEY_PREFIX)) throw fail(at, RESERVED);
    if (!isQualifiedName(key)) throw fail(at, 'must be a valid annotation key');
  }
}

function checkSpec(spec: V1PodSpec, path: string, mainContainer: string, fail: Fail): void {
  for (const key of RESERVED_POD_SPEC_FIELDS) if (spec[key] !== undefined) throw fail(field(path, key), RESERVED);
  for (const key of Object.keys(spec.nodeSelector ?? {})) {
    if (RESERVED_NODE_LABELS.includes(key)) throw fail(field(field(path, 'nodeSelector'), key), RESERVED);
  }
  checkNodeAffinity(spec, field(path, 'affinity'), fail);
  (spec.volumes ?? []).forEach((v, i) => {
    const at = field(item(field(path, 'volumes'), i), 'name');
    if (isReservedVolumeName(required(v.name, at, fail))) throw fail(at, RESERVED);
  });

  for (const list of CONTAINER_LISTS) {
    (spec[list] ?? []).forEach((c, i) => checkContainer(c, item(field(path, list), i), fail));
  }
  const containers = field(path, 'containers');
  let mainIndex = -1;
  // the decoder treats a missing list as absent; the type's promise of one is only kept from here
  const list = (spec.containers as V1Container[] | undefined) ?? [];
  list.forEach((c, i) => {
    if (c.name !== mainContainer) return;
    if (mainIndex !== -1) throw fail(field(item(containers, i), 'name'), 'duplicates the main container');
    mainIndex = i;
  });
  if (mainIndex === -1) throw fail(containers, `must contain the configured main container (${mainContainer})`);
  const main = list[mainIndex];
  for (const key of RESERVED_MAIN_CONTAINER_FIELDS) {
    if (main?.[key] !== undefined) throw fail(field(item(containers, mainIndex), key), RESERVED);
  }
}

function checkNodeAffinity(spec: V1PodSpec, path: string, fail: Fail): void {
  const affinity = spec.affinity?.nodeAffinity;
  if (affinity === undefined) return;
  const base = field(path, 'nodeAffinity');
  const required = field(field(base, 'requiredDuringSchedulingIgnoredDuringExecution'), 'nodeSelectorTerms');
  (affinity.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? []).forEach((term, i) => checkTerm(term, item(required, i), fail));
  const preferred = field(base, 'preferredDuringSchedulingIgnoredDuringExecution');
  (affinity.preferredDuringSchedulingIgnoredDuringExecution ?? []).forEach((p, i) => checkTerm(p.preference, field(item(preferred, i), 'preference'), fail));
}

function checkTerm(term: V1NodeSelectorTerm, path: string, fail: Fail): void {
  for (const list of ['matchExpressions', 'matchFields'] as const) {
    (term[list] ?? []).forEach((req, j) => {
      const at = field(item(field(path, list), j), 'key');
      if (RESERVED_NODE_LABELS.includes(required(req.key, at, fail))) throw fail(at, RESERVED);
    });
  }
}

function checkContainer(c: V1Container | V1EphemeralContainer, path: string, fail: Fail): void {
  required(c.name, field(path, 'name'), fail);
  if (c.image === undefined || c.image.trim() === '') throw fail(field(path, 'image'), 'is required');
  (c.env ?? []).forEach((e, i) => {
    const at = field(item(field(path, 'env'), i), 'name');
    if (isReservedEnvName(required(e.name, at, fail))) throw fail(at, RESERVED);
  });
  // a ConfigMap or Secret could carry HOME or BERTH_* keys that nothing here can see
  if (c.envFrom !== undefined && c.envFrom.length > 0) throw fail(field(path, 'envFrom'), 'is not supported: it could set variables Berth reserves (list them under env)');
  (c.ports ?? []).forEach((p, i) => {
    const at = item(field(path, 'ports'), i);
    if (p.name === AGENTCTL_PORT_NAME) throw fail(field(at, 'name'), RESERVED);
    if (p.containerPort === AGENTCTL_PORT) throw fail(field(at, 'containerPort'), RESERVED);
  });
  (c.volumeMounts ?? []).forEach((m, i) => {
    const at = item(field(path, 'volumeMounts'), i);
    if (isReservedVolumeName(required(m.name, field(at, 'name'), fail))) throw fail(field(at, 'name'), RESERVED);
    if (isReservedPath(required(m.mountPath, field(at, 'mountPath'), fail))) throw fail(field(at, 'mountPath'), RESERVED);
  });
  (c.volumeDevices ?? []).forEach((d, i) => {
    const at = item(field(path, 'volumeDevices'), i);
    if (isReservedVolumeName(required(d.name, field(at, 'name'), fail))) throw fail(field(at, 'name'), RESERVED);
    if (isReservedPath(required(d.devicePath, field(at, 'devicePath'), fail))) throw fail(field(at, 'devicePath'), RESERVED);
  });
}

/** Names and paths the decoder let through as absent although the API requires them. */
function required(value: string | undefined, at: string, fail: Fail): string {
  if (value === undefined || value === '') throw fail(at, 'is required');
  return value;
}
