/**
 * The OpenAPI 3.1 description of the Berth HTTP API, generated from the zod wire schemas
 * (`z.toJSONSchema`) and the route table, so the document cannot drift from the code.
 * @module
 */
import { z } from 'zod';
import { AgentEventPageSchema, ApproveRequestSchema, ApproveResultSchema } from './acp.js';
import { EgressPageSchema, MAX_EGRESS_PAGE } from './egress.js';
import { PoolListSchema, PoolRemoveResultSchema } from './pools.js';
import { ROUTE_TABLE, type Operation } from './routes.js';
import {
  DashboardCodeSchema,
  DashboardLoginRequestSchema,
  DashboardSessionSchema,
  DashboardSessionStateSchema,
  ErrorBodySchema,
  ExecMessageSchema,
  ExecRequestSchema,
  HealthSchema,
  InputRequestSchema,
  LaunchOptionsSchema,
  LaunchRequestSchema,
  LogMessageSchema,
  SessionEventSchema,
  SessionListSchema,
  SessionViewSchema,
  ShellClientMessageSchema,
  ShellServerMessageSchema,
} from './schemas.js';

type JsonObject = Record<string, unknown>;

const COMPONENTS = {
  LaunchRequest: { schema: LaunchRequestSchema, io: 'input' },
  SessionView: SessionViewSchema,
  SessionList: SessionListSchema,
  SessionEvent: SessionEventSchema,
  ExecRequest: { schema: ExecRequestSchema, io: 'input' },
  ExecMessage: ExecMessageSchema,
  InputRequest: { schema: InputRequestSchema, io: 'input' },
  LogMessage: LogMessageSchema,
  ShellClientMessage: ShellClientMessageSchema,
  ShellServerMessage: ShellServerMessageSchema,
  ErrorBody: ErrorBodySchema,
  Health: HealthSchema,
  LaunchOptions: LaunchOptionsSchema,
  PoolList: PoolListSchema,
  PoolRemoveResult: PoolRemoveResultSchema,
  DashboardCode: DashboardCodeSchema,
  DashboardLoginRequest: { schema: DashboardLoginRequestSchema, io: 'input' },
  DashboardSession: DashboardSessionSchema,
  DashboardSessionState: DashboardSessionStateSchema,
  ApproveRequest: { schema: ApproveRequestSchema, io: 'input' },
  ApproveResult: ApproveResultSchema,
  AgentEventPage: AgentEventPageSchema,
  EgressPage: EgressPageSchema,
} as const;

function toSchema(entry: (typeof COMPONENTS)[keyof typeof COMPONENTS]): JsonObject {
  const [schema, io] = 'schema' in entry ? [entry.schema, entry.io] : [entry, 'output' as const];
  const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonObject;
  delete json.$schema;
  return json;
}

const ref = (name: keyof typeof COMPONENTS): JsonObject => ({ $ref: `#/components/schemas/${name}` });
const json = (name: keyof typeof COMPONENTS): JsonObject => ({ 'application/json': { schema: ref(name) } });
const errorResponse = (description: string): JsonObject => ({ description, content: json('ErrorBody') });

const ID_PARAM = { name: 'id', in: 'path', required: true, schema: { type: 'string' }, description: 'Session id, or the unique name of a session' };

const NOT_READY_SCHEMA = {
  type: 'object',
  properties: {
    status: { const: 'not_ready' },
    reason: { enum: ['starting', 'standby', 'stopping'], description: 'starting: opening the store and recovering sessions; standby: another controller is active; stopping: shutting down' },
    message: { type: 'string' },
  },
  required: ['status', 'reason', 'message'],
};

/** What each operation looks like, beyond its method and path (kept exhaustive by the Record type). */
const OPERATIONS: Record<Operation, JsonObject> = {
  health: {
    summary: 'The server and its version, for `berth doctor` (no authentication)',
    responses: { '200': { description: 'The server is up', content: json('Health') } },
  },
  healthz: {
    summary: 'Liveness probe: 200 while the process serves, also while it starts (no authentication, no Host check)',
    responses: { '200': { description: 'Alive', content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ok' } }, required: ['status'] } } } } },
  },
  readyz: {
    summary:
      'Readiness probe: 200 once the controller takes requests (store open, recorded sessions recovered); 503 while it starts, stops or stands by (no authentication, no Host check)',
    responses: {
      '200': { description: 'Ready', content: { 'application/json': { schema: { type: 'object', properties: { status: { const: 'ready' } }, required: ['status'] } } } },
      '503': { description: 'Not ready, and why', content: { 'application/json': { schema: NOT_READY_SCHEMA } } },
    },
  },
  metrics: {
    summary:
      'Prometheus metrics (text format 0.0.4): launch stage durations, sessions by state, reconnects, replacements, API request durations, process metrics. No authentication unless `berth serve` requires the token for it; it carries no secret',
    responses: { '200': { description: 'The exposition', content: { 'text/plain; version=0.0.4': { schema: { type: 'string' } } } } },
  },
  openapi: {
    summary: 'This document',
    responses: { '200': { description: 'OpenAPI 3.1 description', content: { 'application/json': { schema: { type: 'object' } } } } },
  },
  launch: {
    summary: 'Launch a session; the launch continues in the background (follow it with …/events)',
    requestBody: { required: true, content: json('LaunchRequest') },
    responses: {
      '202': { description: 'The session exists (state `launching`)', content: json('SessionView') },
      '400': errorResponse('Invalid request; `error.field` names the field'),
    },
  },
  list: {
    summary: 'List sessions',
    responses: { '200': { description: 'All sessions', content: json('SessionList') } },
  },
  get: {
    summary: 'One session with the stages of its latest launch or resume',
    responses: { '200': { description: 'The session', content: json('SessionView') } },
  },
  remove: {
    summary: 'Destroy the workspace and forget the session',
    parameters: [
      { name: 'force', in: 'query', required: false, schema: { type: 'boolean' }, description: 'Remove even if cleanup fails partially' },
    ],
    responses: { '204': { description: 'Removed' } },
  },
  stop: {
    summary: 'Stop the agent and agentctl, keep the workspace (idempotent)',
    responses: { '200': { description: 'The session', content: json('SessionView') } },
  },
  resume: {
    summary: 'Bring a stopped or failed session back',
    responses: { '200': { description: 'The session', content: json('SessionView') } },
  },
  events: {
    summary: 'Live session events as Server-Sent Events; the current state and stages come first',
    responses: {
      '200': {
        description: 'text/event-stream; each `data:` line is one SessionEvent, `event:` is its type',
        content: { 'text/event-stream': { schema: ref('SessionEvent') } },
      },
    },
  },
  logs: {
    summary:
      "The agent's output as NDJSON (one LogMessage per line; bytes base64). A stopped (or failed) session of a local executor answers with what its last agent run recorded",
    parameters: [
      { name: 'from', in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description: 'First sequence number' },
      { name: 'follow', in: 'query', required: false, schema: { type: 'boolean' }, description: 'Keep streaming until the agent exits' },
      {
        name: 'previous',
        in: 'query',
        required: false,
        schema: { type: 'boolean' },
        description: 'The agent run before the current one (agent-(N-1)); a finished run, so `follow` ends after it',
      },
    ],
    responses: {
      '200': { description: 'application/x-ndjson stream of LogMessage', content: { 'application/x-ndjson': { schema: ref('LogMessage') } } },
    },
  },
  exec: {
    summary: 'Run a command in the workspace; streams NDJSON output, then one `exit` (or `error`) line',
    requestBody: { required: true, content: json('ExecRequest') },
    responses: {
      '200': { description: 'application/x-ndjson stream of ExecMessage', content: { 'application/x-ndjson': { schema: ref('ExecMessage') } } },
    },
  },
  input: {
    summary: "Write text to the agent's stdin (the agent must be running); `eof` closes it",
    requestBody: { required: true, content: json('InputRequest') },
    responses: { '204': { description: 'Written' } },
  },
  cancel: {
    summary: 'ACP agents: cancel the turn in flight (it ends with stop reason `cancelled`; a pending permission request is answered as cancelled). 409 when no turn runs or the agent is raw',
    responses: { '204': { description: 'Cancelled' } },
  },
  approve: {
    summary: "ACP agents: answer a permission request the agent waits on (the oldest pending one unless `requestId` names one): allow, or `deny`; `always` picks the agent's allow-always (reject-always) option where it offers one. 409 when none is pending",
    requestBody: { required: false, content: json('ApproveRequest') },
    responses: { '200': { description: 'The answered request', content: json('ApproveResult') } },
  },
  agentEvents: {
    summary:
      "ACP agents: the agent's typed events from `from` (session opened, prompts, ACP session updates such as messages and tool calls, permission requests and answers, turn ends with usage), one page; resume with `next`. 409 for a raw agent",
    parameters: [
      { name: 'from', in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description: 'First event sequence number' },
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1 }, description: 'At most this many events' },
      {
        name: 'wait',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 0, maximum: 20000 },
        description: 'Long-poll: when there is no event from `from` yet and the agent runs, answer as soon as there is one (or the agent exits), at the latest after this many ms',
      },
    ],
    responses: { '200': { description: 'One page of events', content: json('AgentEventPage') } },
  },
  egress: {
    summary:
      "The connections the session's agent made through Berth's egress proxy (sessions whose profile has `network:`): a summary over the records kept (the latest 10,000) and one page of records, ascending by `seq`",
    parameters: [
      { name: 'after', in: 'query', required: false, schema: { type: 'integer', minimum: 0 }, description: 'Records with a larger `seq` only (the last `seq` of the previous page)' },
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: MAX_EGRESS_PAGE }, description: 'At most this many records (default 1000); 0: the summary alone' },
      { name: 'tail', in: 'query', required: false, schema: { type: 'integer', minimum: 0, maximum: MAX_EGRESS_PAGE }, description: 'The latest this many records instead (not with `after` or `limit`)' },
    ],
    responses: { '200': { description: 'The summary and the records', content: json('EgressPage') }, '400': errorResponse('A bad `after`, `limit` or `tail`; `error.field` names it') },
  },
  shell: {
    summary:
      'WebSocket upgrade: an interactive shell under a PTY (`script`) in the workspace. Client sends ShellClientMessage, server sends ShellServerMessage (JSON text frames). Query `rows`/`cols` give the initial size; browsers may pass the token as `?token=`, or with the dashboard cookie its CSRF token as `?csrf=`.',
    parameters: [
      { name: 'rows', in: 'query', required: false, schema: { type: 'integer' } },
      { name: 'cols', in: 'query', required: false, schema: { type: 'integer' } },
    ],
    responses: { '101': { description: 'Switching protocols (messages: ShellClientMessage in, ShellServerMessage out)' } },
  },
  allEvents: {
    summary:
      'Live events of every session as Server-Sent Events: first the current state of each session, then each event as it happens (a new session starts with `state` launching, a removed one ends with `removed`)',
    responses: {
      '200': {
        description: 'text/event-stream; each `data:` line is one SessionEvent, `event:` is its type',
        content: { 'text/event-stream': { schema: ref('SessionEvent') } },
      },
    },
  },
  launchOptions: {
    summary: "What a launch may name, from the server's config: agents, executors and profiles (with their type), and the defaults",
    responses: { '200': { description: 'The launch options', content: json('LaunchOptions') } },
  },
  pools: {
    summary: 'The warm pools (`profiles.<name>.pool`): each pooled profile with its size and members (ready, being made, being claimed)',
    responses: { '200': { description: 'The pools', content: json('PoolList') } },
  },
  removePool: {
    summary: "Deletes the ready members of a profile's pool now (Pod, then PVC, then row); the pool makes new ones while its size is above 0 (e.g. after the image behind a tag changed). 404 for a profile with no pool",
    responses: { '200': { description: 'How many were deleted', content: json('PoolRemoveResult') }, '404': errorResponse('No such pooled profile') },
  },
  dashboardCodes: {
    summary: 'A one-time dashboard login code (valid 5 minutes, once); `berth dashboard` prints the URL with it. Bearer token only',
    security: [{ bearer: [] }],
    responses: { '200': { description: 'The code', content: json('DashboardCode') }, '403': errorResponse('Called with the cookie (codes are for the bearer token)') },
  },
  dashboardLogin: {
    summary: 'Exchange a login code for the dashboard cookie (`berth_session_<id>`, per server, HttpOnly, SameSite=Strict) and its CSRF token, which is told only here',
    requestBody: { required: true, content: json('DashboardLoginRequest') },
    responses: {
      '200': { description: 'Logged in: Set-Cookie berth_session_<id>, and the CSRF token (keep it: no route tells it again)', content: json('DashboardSession') },
      '401': errorResponse('The code was already used, is unknown or has expired'),
      '403': errorResponse('Sent from another Origin'),
    },
  },
  dashboardSession: {
    summary: 'Whether the dashboard cookie session is live (needs the cookie and its `x-berth-csrf` token; 401: not logged in). It never tells the token',
    security: [{ cookie: [], csrf: [] }],
    responses: { '200': { description: 'Logged in', content: json('DashboardSessionState') } },
  },
  dashboardLogout: {
    summary: 'End the dashboard cookie session (with the cookie: needs `x-berth-csrf` and the same Origin)',
    responses: { '204': { description: 'Logged out; the cookie is cleared' } },
  },
};

/** Builds the OpenAPI 3.1 document for the given server version. */
export function generateOpenApi(version: string, opts: { cookieName?: string } = {}): JsonObject {
  const paths: Record<string, Record<string, JsonObject>> = {};
  for (const route of ROUTE_TABLE) {
    const op: JsonObject = { operationId: route.operation, ...OPERATIONS[route.operation] };
    const params = [...(route.path.includes('{id}') ? [ID_PARAM] : []), ...((op.parameters as JsonObject[] | undefined) ?? [])];
    if (params.length > 0) op.parameters = params;
    const responses = { ...(op.responses as JsonObject) };
    if (route.auth) {
      op.security ??= [{ bearer: [] }, { cookie: [], csrf: [] }];
      responses['401'] ??= errorResponse('Missing or wrong bearer token, or the dashboard cookie without its `x-berth-csrf` token');
      if (route.method !== 'GET' && !(op.security as JsonObject[]).every((s) => 'bearer' in s)) {
        responses['403'] ??= errorResponse('Cookie call from another Origin');
      }
    } else {
      op.security = [];
    }
    if (route.path.includes('{id}')) {
      responses['404'] = errorResponse('Unknown session id or name');
      if (route.operation !== 'get' && route.operation !== 'events' && route.operation !== 'logs' && route.operation !== 'egress') {
        responses['409'] = errorResponse("The session's state does not allow this");
      }
    }
    responses.default = errorResponse('Error envelope');
    op.responses = responses;
    (paths[route.path] ??= {})[route.method.toLowerCase()] = op;
  }
  const schemas: Record<string, JsonObject> = {};
  for (const [name, entry] of Object.entries(COMPONENTS)) schemas[name] = toSchema(entry);
  return {
    openapi: '3.1.0',
    info: {
      title: 'Berth API',
      version,
      description:
        'Controller API of Berth (`berth serve`, loopback by default). Authenticate with `Authorization: Bearer <token>` (the token is in `<dataDir>/state/api-token`), or with the dashboard cookie from `POST /api/v1/dashboard/login` together with the CSRF token that answer carries: the cookie alone is refused on every route; every request made with it needs the header `x-berth-csrf` (the shell WebSocket: `?csrf=`), and every POST and DELETE an `Origin` equal to the server\'s own. Every request must name the server in `Host` (127.0.0.1, localhost or [::1] with its port, or the `--host` of `berth serve`); others are refused with 403. The probes (`/healthz`, `/readyz`) and `/metrics` need neither a token nor a matching Host.',
    },
    servers: [{ url: 'http://127.0.0.1:7420' }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', description: 'Contents of <dataDir>/state/api-token' },
        cookie: { type: 'apiKey', in: 'cookie', name: opts.cookieName ?? 'berth_session_<id>', description: 'The dashboard session (see /api/v1/dashboard/login); its name is per server. Never enough alone' },
        csrf: { type: 'apiKey', in: 'header', name: 'x-berth-csrf', description: 'The CSRF token of the cookie session, from the login answer' },
      },
    },
  };
}
