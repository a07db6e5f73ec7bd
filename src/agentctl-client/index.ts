/**
 * Typed client of agentctl, the in-workspace daemon: the control API (health, handshake, instances)
 * and the instance API (processes, resumable output streams, files, git). Browser-safe: no Node APIs;
 * `fetch` and the WebSocket factory are injectable.
 *
 * @example
 * const control = new ControlClient({ baseUrl: 'http://127.0.0.1:8765' });
 * await control.handshake(nonce);
 * const info = await control.createInstance({ id: 'task-1', workspace_path: '/workspace' });
 * const inst = control.instance(info);
 * const proc = await inst.startProcess({ command: ['npm', 'test'], id: 'tests' });
 * for await (const message of inst.streamOutput(proc.id)) { ... }
 * const shell = inst.attach(proc.id); shell.write('ls\n'); shell.end(); // stdin over the same socket
 * @module
 */
export { ControlClient } from './control.js';
export type { ControlClientOptions, InstanceClientOverrides } from './control.js';
export { InstanceClient } from './instance.js';
export type { AllOutput, InstanceClientOptions, ReadOutputOptions, TokenSource, WriteStdinOptions } from './instance.js';
export { FilesClient } from './files.js';
export type { DeleteFileOptions, TreeOptions, WriteFileOptions } from './files.js';
export { GitClient } from './git.js';
export type { DiffOptions, LogOptions } from './git.js';
export { ProcessAttachment } from './attach.js';
export type { AttachOptions } from './attach.js';
export { OutputStream } from './stream.js';
export type { StreamOutputOptions } from './stream.js';
export { DEFAULT_TIMEOUT_MS } from './http.js';
export type { CallOptions, FetchLike, HttpClientOptions } from './http.js';
export { DEFAULT_RETRY } from './retry.js';
export type { RetryOptions } from './retry.js';
export type { WebSocketFactory, WebSocketLike } from './websocket.js';
export { chunkBytes, outputText } from './output.js';
export { bytesToText } from './base64.js';
export {
  AgentctlError,
  AgentctlHttpError,
  AgentctlReconcileError,
  AgentctlStreamError,
  AgentctlTimeoutError,
  AgentctlUnreachableError,
  ProtocolError,
  isAgentctlError,
  isAgentctlHttpError,
  isAgentctlReconcileError,
  isAgentctlStreamError,
  isAgentctlTimeoutError,
  isAgentctlUnreachableError,
  isProtocolError,
  isSpawnFailedError,
  mayHaveBeenApplied,
} from './errors.js';
export type { ReconcileFailure, SpawnFailedError } from './errors.js';
