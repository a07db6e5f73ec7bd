/**
 * Verifies the Pod the API server admitted against the one Berth composed (spec §4.4, Berth's
 * names). Mutating webhooks and defaulting may add what does not touch Berth's fields (labels,
 * annotations, sidecars, tolerations, `dnsPolicy`, `serviceAccountName: default` …); anything that
 * changes ownership, placement by platform, Berth's scheduling gate, the bootstrap, the agentctl
 * port, reserved volumes, mounts or environment is a finding (another controller's gate is not:
 * the monitor reports the Pod as gated). Findings name fields, never values.
 * @module
 */
import type { V1Container, V1ContainerPort, V1EphemeralContainer, V1Pod, V1PodSpec } from '@kubernetes/client-node';
import { AGENTCTL_PORT, AGENTCTL_PORT_NAME, SCHEDULING_GATE } from '../constants.js';
import { isReservedEnvName, isReservedPath, isReservedVolumeName } from '../config/index.js';
import { platformAffinityProblems } from './admission-affinity.js';
import { metadataProblems } from './admission-metadata.js';
import { sameObject } from './canonical.js';
import { AdmissionError } from './errors.js';

interface PodAdmissionOptions {
  mainContainer: string;
  /**
   * The object was read after the scheduler could have bound it (a GET reconciling an ambiguous
   * create): a `nodeName` is then accepted. On the create response it is a finding, since a webhook
   * that sets it bypasses the scheduler and Berth's node selector.
   */
  afterScheduling?: boolean;
}

type AnyContainer = V1Container | V1EphemeralContainer;

function allContainers(spec: V1PodSpec | undefined): { list: string; c: AnyContainer }[] {
  return [
    ...(spec?.initContainers ?? []).map((c) => ({ list: 'initContainers', c })),
    ...(spec?.containers ?? []).map((c) => ({ list: 'containers', c })),
    ...(spec?.ephemeralContainers ?? []).map((c) => ({ list: 'ephemeralContainers', c })),
  ];
}

function isAgentctlPort(p: { name?: string; containerPort: number }): boolean {
  return p.name === AGENTCTL_PORT_NAME || p.containerPort === AGENTCTL_PORT;
}

/** Every finding about `actual`; empty when it is acceptable. */
export function podAdmissionProblems(desired: V1Pod, actual: V1Pod, opts: PodAdmissionOptions): string[] {
  const problems = metadataProblems('Pod', desired.metadata ?? {}, actual.metadata);
  const want = desired.spec;
  const have = actual.spec;
  if (want === undefined) throw new Error('desired Pod has no spec');
  if (have === undefined) return [...problems, 'admitted Pod has no spec'];

  if (have.restartPolicy !== want.restartPolicy) problems.push('admitted Pod mutated an owned Pod invariant (spec.restartPolicy)');
  if (!sameObject(have.os, want.os)) problems.push('admitted Pod mutated an owned Pod invariant (spec.os)');
  if (have.automountServiceAccountToken !== want.automountServiceAccountToken) {
    problems.push('admitted Pod mutated an owned Pod invariant (spec.automountServiceAccountToken)');
  }
  if ((have.nodeName ?? '') !== (want.nodeName ?? '') && !(opts.afterScheduling === true && want.nodeName === undefined)) {
    problems.push('admitted Pod mutated an owned Pod invariant (spec.nodeName)');
  }
  if (berthGates(have) !== berthGates(want)) problems.push(`admitted Pod mutated Berth's scheduling gate "${SCHEDULING_GATE}"`);
  const os = want.nodeSelector?.['kubernetes.io/os'] ?? 'linux';
  const arch = want.nodeSelector?.['kubernetes.io/arch'] ?? '';
  for (const key of ['kubernetes.io/os', 'kubernetes.io/arch']) {
    if (have.nodeSelector?.[key] !== want.nodeSelector?.[key]) problems.push(`admitted Pod mutated owned node selector "${key}"`);
  }
  problems.push(...platformAffinityProblems(want.affinity, have.affinity, { os, arch }));
  problems.push(...mainContainerProblems(want, have, opts.mainContainer));
  problems.push(...containerProblems(want, have, opts.mainContainer));
  problems.push(...volumeProblems(want, have));
  return problems;
}

/** How often Berth's gate is on the spec: 1 on a Pod created while its claim binds, else 0. */
function berthGates(spec: V1PodSpec): number {
  return (spec.schedulingGates ?? []).filter((g) => g.name === SCHEDULING_GATE).length;
}

/** Throws an {@link AdmissionError} listing every finding. */
export function assertPodAdmitted(desired: V1Pod, actual: V1Pod, opts: PodAdmissionOptions): void {
  const problems = podAdmissionProblems(desired, actual, opts);
  if (problems.length > 0) throw new AdmissionError('Pod', problems);
}

/**
 * The admitted port is the desired one. With hostNetwork the API server defaults `hostPort` to the
 * container port (they must be equal there): that default is not a mutation.
 */
function samePort(actual: V1ContainerPort, desired: V1ContainerPort, spec: V1PodSpec): boolean {
  if (sameObject(actual, desired)) return true;
  if (spec.hostNetwork !== true || desired.hostPort !== undefined || actual.hostPort !== actual.containerPort) return false;
  const { hostPort: _defaulted, ...rest } = actual;
  return sameObject(rest, desired);
}

function mainContainerProblems(want: V1PodSpec, have: V1PodSpec, name: string): string[] {
  const w = want.containers.find((c) => c.name === name);
  if (w === undefined) throw new Error(`desired Pod has no container "${name}"`);
  const h = (have.containers ?? []).find((c) => c.name === name);
  if (h === undefined) return ['admitted Pod is missing the owned main container'];
  const problems: string[] = [];
  if (!sameObject(h.command, w.command) || !sameObject(h.args, w.args) || h.workingDir !== w.workingDir) {
    problems.push('admitted Pod mutated the main-container bootstrap');
  }
  for (const port of (w.ports ?? []).filter(isAgentctlPort)) {
    if ((h.ports ?? []).filter((p) => samePort(p, port, have)).length !== 1) problems.push('admitted Pod mutated the agentctl port');
  }
  for (const mount of (w.volumeMounts ?? []).filter((m) => isReservedVolumeName(m.name) || isReservedPath(m.mountPath))) {
    if ((h.volumeMounts ?? []).filter((m) => sameObject(m, mount)).length !== 1) problems.push(`admitted Pod mutated the reserved volume mount "${mount.name}"`);
  }
  return problems;
}

function containerProblems(want: V1PodSpec, have: V1PodSpec, mainName: string): string[] {
  const wantByName = new Map(allContainers(want).map(({ list, c }) => [`${list}/${c.name}`, c]));
  const problems: string[] = [];
  for (const { list, c } of allContainers(have)) {
    const where = `${list === 'containers' ? 'container' : list.replace(/s$/, '').replace('Container', ' container')} "${c.name}"`;
    const isMain = list === 'containers' && c.name === mainName;
    const w = wantByName.get(`${list}/${c.name}`);
    if ((c.envFrom ?? []).length > 0 && !sameObject(c.envFrom, w?.envFrom)) {
      problems.push(`admitted Pod ${where} uses envFrom, which can inject reserved environment keys`);
    }
    for (const e of c.env ?? []) {
      if (isReservedEnvName(e.name) && !(w?.env ?? []).some((d) => sameObject(d, e))) problems.push(`admitted Pod added a reserved environment key "${e.name}" to ${where}`);
    }
    for (const p of c.ports ?? []) {
      if (isAgentctlPort(p) && !(isMain && (w?.ports ?? []).some((d) => samePort(p, d, have)))) problems.push(`admitted Pod mutated the agentctl port (${where})`);
    }
    for (const m of c.volumeMounts ?? []) {
      if ((isReservedVolumeName(m.name) || isReservedPath(m.mountPath)) && !(isMain && (w?.volumeMounts ?? []).some((d) => sameObject(d, m)))) {
        problems.push(`admitted Pod mutated a reserved volume mount (${where} mounts "${m.name}" at ${m.mountPath})`);
      }
    }
    for (const d of c.volumeDevices ?? []) {
      if (isReservedVolumeName(d.name) || isReservedPath(d.devicePath)) problems.push(`admitted Pod added a reserved volume device to ${where}`);
    }
  }
  return problems;
}

function volumeProblems(want: V1PodSpec, have: V1PodSpec): string[] {
  const problems: string[] = [];
  const reservedWant = (want.volumes ?? []).filter((v) => isReservedVolumeName(v.name));
  const reservedHave = (have.volumes ?? []).filter((v) => isReservedVolumeName(v.name));
  for (const w of reservedWant) {
    const same = reservedHave.filter((v) => v.name === w.name);
    if (same.length !== 1 || !sameObject(same[0], w)) problems.push(`admitted Pod mutated the reserved volume "${w.name}"`);
  }
  for (const h of reservedHave) {
    if (!reservedWant.some((w) => w.name === h.name)) problems.push(`admitted Pod added the reserved volume "${h.name}"`);
  }
  return problems;
}
