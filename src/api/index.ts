/**
 * The Berth HTTP API, browser-safe part: the typed client, wire schemas, routes, errors and the
 * OpenAPI generator. The Node-only server (`server.ts`, `serve.ts`) and data-dir discovery
 * (`data-dir.ts`, `node-client.ts`) are imported directly by the CLI.
 *
 * @example
 * import { BerthClient } from './api/index.js';
 * const berth = new BerthClient({ baseUrl: 'http://127.0.0.1:7420', token });
 * console.log(await berth.list());
 * @module
 */
export {
  BerthClient,
  type BerthClientOptions,
  type ExecParams,
  type ExitResult,
  type OutputChunk,
  type ShellConnection,
  type WebSocketFactory,
  type WebSocketLike,
} from './api-client.js';
export { BerthApiError, ControllerUnreachableError, StreamBrokenError } from './errors.js';
export { generateOpenApi } from './openapi.js';
export { API_PREFIX, DEFAULT_API_PORT, apiRoutes } from './routes.js';
export {
  DashboardCodeSchema,
  DashboardSessionSchema,
  DashboardSessionStateSchema,
  ErrorBodySchema,
  ExecMessageSchema,
  ExecRequestSchema,
  LaunchOptionsSchema,
  LaunchRequestSchema,
  LogMessageSchema,
  SessionEventSchema,
  SessionViewSchema,
  ShellClientMessageSchema,
  ShellServerMessageSchema,
  type ApiErrorCode,
  type DashboardCode,
  type DashboardSession,
  type DashboardSessionState,
  type LaunchOptions,
  type ErrorBody,
  type ExecMessage,
  type LogMessage,
  type ShellClientMessage,
  type ShellServerMessage,
} from './schemas.js';
