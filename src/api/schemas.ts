/**
 * The Berth HTTP API wire: zod schemas for every request and response body, streaming message
 * and the error envelope. Shared by the server (decodes requests), the typed client (decodes
 * responses) and the OpenAPI generator. No Node APIs here.
 * @module
 */
import { z } from 'zod';
import type {
  LaunchRequest,
  SessionEvent,
  SessionView,
  StageRecord,
} from '../controller/service.js';

export const SessionStateSchema = z.enum(['launching', 'ready', 'stopping', 'stopped', 'failed', 'removing']);
export const StageStatusSchema = z.enum(['running', 'waiting', 'succeeded', 'failed']);

export const StageRecordSchema = z.object({
  name: z.string(),
  status: StageStatusSchema,
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
  reason: z.string().nullable(),
  message: z.string().nullable(),
});

export const RepositoryRefSchema = z
  .strictObject({
    url: z.string().min(1).optional(),
    path: z.string().min(1).optional(),
    branch: z.string().min(1).optional(),
  })
  .meta({ description: 'A clone URL or a local repository path (exactly one), with an optional branch.' });

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Body of `POST /api/v1/sessions`. */
export const LaunchRequestSchema = z
  .strictObject({
    repository: RepositoryRefSchema,
    agent: z.string().min(1).optional(),
    executor: z.string().min(1).optional(),
    name: z.string().min(1).max(128).optional(),
    env: z.record(z.string().regex(ENV_NAME, 'must be a valid environment variable name'), z.string()).optional(),
    secretEnv: z.array(z.string().regex(ENV_NAME)).optional(),
    prompt: z.string().optional(),
  })
  .superRefine((req, ctx) => {
    const { url, path } = req.repository;
    if ((url === undefined) === (path === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['repository'], message: 'must set exactly one of url or path' });
    }
  });

export const SessionErrorSchema = z.object({ message: z.string(), stage: z.string().nullable() });

export const AgentProcessViewSchema = z.object({
  id: z.string(),
  status: z.enum(['running', 'exited']),
  exitCode: z.number().int().nullable(),
});

export const SessionViewSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  executor: z.string(),
  agent: z.string(),
  repository: z.object({
    url: z.string().optional().meta({ description: 'The clone URL, never with credentials (they are split off at launch).' }),
    path: z.string().optional(),
    branch: z.string().optional(),
    credentials: z.boolean().optional().meta({ description: 'True when the launch URL carried a credential: stored encrypted, used only to clone.' }),
  }),
  state: SessionStateSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
  stages: z.array(StageRecordSchema),
  workspacePath: z.string().nullable(),
  error: SessionErrorSchema.nullable(),
  agentProcess: AgentProcessViewSchema.nullable(),
});

export const SessionListSchema = z.object({ sessions: z.array(SessionViewSchema) });

/** One `data:` payload of `GET /api/v1/sessions/{id}/events` (Server-Sent Events; `event:` is the type). */
export const SessionEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('state'),
    sessionId: z.string(),
    state: SessionStateSchema,
    error: SessionErrorSchema.nullable(),
    at: z.string(),
  }),
  z.object({ type: z.literal('stage'), sessionId: z.string(), stage: StageRecordSchema, at: z.string() }),
  z.object({
    type: z.literal('diagnostic'),
    sessionId: z.string(),
    reason: z.string(),
    message: z.string(),
    at: z.string(),
  }),
]);

export const ERROR_CODES = [
  'bad_request', // malformed JSON, wrong types, unknown fields, launch validation
  'unauthorized', // missing or wrong bearer token
  'not_found',
  'method_not_allowed',
  'conflict', // the session's state does not allow the operation
  'not_implemented',
  'internal',
] as const;
export type ApiErrorCode = (typeof ERROR_CODES)[number];

/** Every non-2xx response body (and the `error` message of the streams). */
export const ErrorBodySchema = z.object({
  error: z.object({
    code: z.enum(ERROR_CODES),
    message: z.string(),
    /** For `bad_request`: the dotted path of the offending field. */
    field: z.string().optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBodySchema>;

/** Body of `POST /api/v1/sessions/{id}/exec`. */
export const ExecRequestSchema = z.strictObject({
  /** argv; no shell is involved unless you run one. */
  argv: z.array(z.string()).min(1).max(4096),
  /** Working directory, relative to the workspace. */
  cwd: z.string().optional(),
  env: z.record(z.string().regex(ENV_NAME, 'must be a valid environment variable name'), z.string()).optional(),
  /** The whole stdin of the command, base64. */
  stdin: z.base64().optional(),
});
export type ExecRequestBody = z.infer<typeof ExecRequestSchema>;

export const OutputChunkWireSchema = z.object({
  seq: z.number().int().nonnegative(),
  stream: z.enum(['stdout', 'stderr']),
  /** base64 of the raw bytes */
  data: z.string(),
});
export type OutputChunkWire = z.infer<typeof OutputChunkWireSchema>;

const StreamErrorSchema = z.object({ type: z.literal('error'), error: ErrorBodySchema.shape.error });
/** Sent every 15 s while nothing else is, so proxies and HTTP clients do not time out a quiet stream; ignore it. */
const PingSchema = z.object({ type: z.literal('ping') });

/** One line of the NDJSON response of `GET …/logs`. */
export const LogMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('output'), chunk: OutputChunkWireSchema }),
  /** Sent once a non-follow read is exhausted or a followed agent has exited. */
  z.object({ type: z.literal('end') }),
  StreamErrorSchema,
  PingSchema,
]);
export type LogMessage = z.infer<typeof LogMessageSchema>;

/** One line of the NDJSON response of `POST …/exec`: output chunks, then exactly one `exit` or `error`. */
export const ExecMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('output'), chunk: OutputChunkWireSchema }),
  z.object({ type: z.literal('exit'), exitCode: z.number().int().nullable(), signal: z.string().nullable() }),
  StreamErrorSchema,
  PingSchema,
]);
export type ExecMessage = z.infer<typeof ExecMessageSchema>;

/** WebSocket `…/shell`, client → server (JSON text frames). */
export const ShellClientMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('stdin'), data: z.base64() }),
  z.object({ type: z.literal('resize'), rows: z.number().int().min(1).max(1000), cols: z.number().int().min(1).max(1000) }),
  z.object({ type: z.literal('eof') }),
]);
export type ShellClientMessage = z.infer<typeof ShellClientMessageSchema>;

/** WebSocket `…/shell`, server → client (JSON text frames); `exit` or `error` is the last message. */
export const ShellServerMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('output'), chunk: OutputChunkWireSchema }),
  z.object({ type: z.literal('exit'), exitCode: z.number().int().nullable(), signal: z.string().nullable() }),
  StreamErrorSchema,
]);
export type ShellServerMessage = z.infer<typeof ShellServerMessageSchema>;

export const HealthSchema = z.object({ status: z.literal('ok'), version: z.string() });
export type Health = z.infer<typeof HealthSchema>;

// Compile-time checks that the wire schemas and the service types cannot drift apart.
type Equals<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const viewMatches: Equals<z.infer<typeof SessionViewSchema>, SessionView> = true;
const stageMatches: Equals<z.infer<typeof StageRecordSchema>, StageRecord> = true;
const eventMatches: Equals<z.infer<typeof SessionEventSchema>, SessionEvent> = true;
const launchMatches: z.infer<typeof LaunchRequestSchema> extends LaunchRequest ? true : false = true;
void [viewMatches, stageMatches, eventMatches, launchMatches];
