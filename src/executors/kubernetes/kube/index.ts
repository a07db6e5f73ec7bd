/**
 * The Kubernetes I/O layer of the executor: client construction, errors, Pod/PVC objects, exec,
 * supervised port-forward, watches, the Events it writes and access checks, and the narrow ports
 * (ports.ts) the launch, stop and sweep code reaches them through. Re-exports only.
 * @module
 */
export { createKubeClient } from './client.js';
export type { KubeClient } from './client.js';
export { KubeApiError, KubeConfigError, isAlreadyExists, isConflict, isForbidden, isNotFound } from './errors.js';
export { createPod, createPvc, deletePod, deletePvc, getPod, getPvc } from './objects.js';
export type { CreateOptions, DeleteOutcome, DeletePreconditions, Listing } from './objects.js';
export type { LabelChanges, RelabelTarget } from './relabel.js';
export type { GateTarget } from './gate.js';
export { KubeExecError, execInContainer, isExecUnavailable, SUBPROTOCOL_UNSUPPORTED } from './exec.js';
export type { ExecOptions, ExecResult } from './exec.js';
export { FORWARD_LOCAL_ADDRESS, KubeForwardError, openForward } from './forward.js';
export type { ForwardTarget, PortForwardSession } from './forward.js';
export { pause, watchEvents, watchPod } from './watch.js';
export type { ObjectEvent } from './watch.js';
export type { AccessCheck, AccessDenial } from './access.js';
export { EVENT_WRITE_ACCESS, EXECUTOR_ACCESS, describeAccess, deniedAccess, getNamespace, getStorageClass, selfSubjectUser, serverVersion } from './access.js';
export { kubePorts } from './ports.js';
export type { KubeEvents, KubeExec, KubeObjects, KubePortForward, KubePorts, PodListHandlers } from './ports.js';
export type { EventObjectRef, EventRecord } from './events.js';
export type { KubePolicies } from './policies.js';
