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
export { InstanceClient } from './instance.js';
export { FilesClient } from './files.js';
export { GitClient } from './git.js';
export type { FetchLike } from './http.js';
export type { WebSocketFactory, WebSocketLike } from './websocket.js';
export { chunkBytes, outputText } from './output.js';
export {
  AgentctlHttpError,
  AgentctlUnreachableError,
  isAgentctlHttpError,
  isAgentctlUnreachableError,
  isSpawnFailedError,
} from './errors.js';
