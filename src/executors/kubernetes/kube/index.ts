/**
 * The Kubernetes I/O layer of the executor: client construction, errors, Pod/PVC objects, exec,
 * supervised port-forward, watches and access checks. Re-exports only.
 * @module
 */
export { createKubeClient } from './client.js';
export type { CallOptions, CreateKubeClientOptions, KubeClient } from './client.js';
export { KubeApiError, KubeConfigError, isAlreadyExists, isConflict, isForbidden, isGone, isNotFound, statusFromBody, toKubeApiError } from './errors.js';
export type { KubeErrorReason } from './errors.js';
export { createPod, createPvc, deletePod, deletePvc, getPod, getPvc } from './objects.js';
export type { CreateOptions, DeleteOutcome, DeletePreconditions } from './objects.js';
export { DEFAULT_MAX_OUTPUT_BYTES, KubeExecError, execInContainer, isExecUnavailable, SUBPROTOCOL_UNSUPPORTED } from './exec.js';
export type { ExecFailureKind, ExecOptions, ExecResult, ExecStdin } from './exec.js';
export { FORWARD_LOCAL_ADDRESS, KubeForwardError, openForward } from './forward.js';
export type { ForwardStats, ForwardTarget, OpenForwardOptions, PortForwardSession } from './forward.js';
export { pause, RELIST_DELAY_MS, watchEvents, watchPod, watchPods, watchPvc } from './watch.js';
export type { ObjectEvent, WatchOptions } from './watch.js';
export { EXECUTOR_ACCESS, deniedAccess, describeAccess, serverVersion } from './access.js';
export type { AccessCheck, AccessDenial, ServerVersion } from './access.js';
