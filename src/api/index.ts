/**
 * The Berth HTTP API, browser-safe: the wire schemas and the types derived from them, the typed
 * client, the routes, the errors and the OpenAPI generator. The one way in for the dashboard
 * (`web/`), the CLI, the server (`src/server`, which holds the Node side) and the controller's
 * service types. `tsconfig.browser.json` here compiles this folder without Node types.
 *
 * @example
 * import { BerthClient } from './api/index.js';
 * const berth = new BerthClient({ baseUrl: 'http://127.0.0.1:7420', token });
 * console.log(await berth.list());
 * @module
 */
export { BerthClient, type WebSocketLike } from './api-client.js';
export { BerthApiError, ControllerUnreachableError, STATUS_OF, StreamBrokenError } from './errors.js';
export { generateOpenApi } from './openapi.js';
export { apiRoutes, DEFAULT_API_PORT, matchRoute, ROUTE_TABLE, type Operation } from './routes.js';
export type { PoolMemberView, PoolRemoveResult, PoolView } from './pools.js';
export { MAX_EGRESS_PAGE, type EgressPage, type EgressQuery, type EgressRecordView, type EgressSummaryView } from './egress.js';
export { ApproveRequestSchema, MAX_AGENT_EVENTS_WAIT_MS, type AgentEvent, type AgentEventPage, type ApproveRequest, type ApproveResult } from './acp.js';
export {
  DashboardLoginRequestSchema,
  ExecRequestSchema,
  InputRequestSchema,
  LaunchRequestSchema,
  MAX_SHELL_FRAME_BYTES,
  ShellClientMessageSchema,
  type AgentProcessView,
  type ApiErrorCode,
  type ErrorBody,
  type ExecMessage,
  type LaunchOptions,
  type LaunchRequest,
  type LogMessage,
  type OutputChunkWire,
  type RepositoryRef,
  type SessionError,
  type SessionEvent,
  type SessionState,
  type SessionView,
  type ShellClientMessage,
  type ShellServerMessage,
  type StageRecord,
} from './schemas.js';
