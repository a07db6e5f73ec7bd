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
import { LAUNCH_LIMITS, launchRequestProblems } from '../shared/launch-limits.js';

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
  waits: z
    .array(z.object({ at: z.string(), reason: z.string(), message: z.string() }))
    .optional()
    .meta({ description: 'What the stage waited for, in order (Kubernetes: scheduling, image pull, volume binding, warning events …).' }),
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
    repository: RepositoryRefSchema.optional().meta({ description: 'Required for local executors; a Kubernetes session without one starts in an empty workspace.' }),
    agent: z.string().min(1).optional(),
    executor: z.string().min(1).optional(),
    name: z.string().optional().meta({ description: 'A unique human name; every route that takes a session id also takes it. 1-63 characters: letters, digits, ".", "_", "-".' }),
    env: z.record(z.string().regex(ENV_NAME, 'must be a valid environment variable name'), z.string()).optional(),
    secretEnv: z.array(z.string().regex(ENV_NAME)).optional(),
    prompt: z.string().optional().meta({ description: `At most ${LAUNCH_LIMITS.promptBytes} bytes (UTF-8).` }),
  })
  .superRefine((req, ctx) => {
    const { url, path } = req.repository ?? { url: '' };
    if ((url === undefined) === (path === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['repository'], message: 'must set exactly one of url or path' });
    }
    for (const p of launchRequestProblems(req)) ctx.addIssue({ code: 'custom', path: p.field.split('.'), message: p.message });
  })
  .meta({
    description: `env: at most ${LAUNCH_LIMITS.envEntries} entries, ${LAUNCH_LIMITS.envEntryBytes} bytes per NAME=value and ${LAUNCH_LIMITS.envTotalBytes} bytes in all.`,
  });

export const SessionErrorSchema = z.object({ message: z.string(), stage: z.string().nullable() });

export const AgentProcessViewSchema = z.object({
  id: z.string(),
  status: z.enum(['running', 'exited', 'lost']).meta({ description: '`lost`: its agentctl died and the agent with it; `berth resume` starts it again.' }),
  exitCode: z.number().int().nullable(),
  lostReason: z.string().optional(),
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
  z.object({ type: z.literal('removed'), sessionId: z.string(), at: z.string() }).meta({ description: 'The session was removed (its workspace destroyed).' }),
]);

export const ERROR_CODES = [
  'bad_request', // malformed JSON, wrong types, unknown fields, launch validation
  'unauthorized', // missing or wrong bearer token (or dashboard cookie / login code)
  'forbidden', // dashboard cookie without CSRF token or same Origin; a foreign Host header
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
  argv: z
    .array(z.string())
    .min(1)
    .max(4096)
    .refine((argv) => argv[0] !== '', { message: 'the program (argv[0]) must not be empty' }),
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

/** Largest frame the shell WebSocket accepts; a larger one closes the connection with 1009. */
export const MAX_SHELL_FRAME_BYTES = 1 << 20;
/** Raw stdin bytes per `stdin` frame a client sends (base64 and JSON keep the frame far below MAX_SHELL_FRAME_BYTES). */
export const SHELL_STDIN_CHUNK_BYTES = 256 << 10;

/** WebSocket `…/shell`, server → client (JSON text frames); `exit` or `error` is the last message. */
export const ShellServerMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('output'), chunk: OutputChunkWireSchema }),
  z.object({ type: z.literal('exit'), exitCode: z.number().int().nullable(), signal: z.string().nullable() }),
  StreamErrorSchema,
]);
export type ShellServerMessage = z.infer<typeof ShellServerMessageSchema>;

/** Body of `POST /api/v1/sessions/{id}/input`: text for the agent's stdin. */
export const InputRequestSchema = z.strictObject({
  /** Written as UTF-8, as is (add the newline a line-reading agent waits for). */
  data: z.string().max(1 << 20),
  /** Close the agent's stdin after writing. */
  eof: z.boolean().optional(),
});
export type InputRequestBody = z.infer<typeof InputRequestSchema>;

export const HealthSchema = z.object({
  status: z.literal('ok'),
  version: z.string(),
  /** sha256 (hex) of the config file the server loaded at start; null when it runs on built-in defaults. */
  configSha256: z.string().nullable().optional(),
});
export type Health = z.infer<typeof HealthSchema>;

/** `GET /api/v1/launch-options`: what the config offers a launch form. */
export const LaunchOptionsSchema = z.object({
  agents: z.array(z.string()),
  targets: z.array(
    z.object({
      name: z.string(),
      type: z.enum(['local', 'kubernetes']),
      kind: z.enum(['executor', 'profile']).meta({ description: 'An executor entry used directly, or a profile of one' }),
    }),
  ),
  defaults: z.object({ agent: z.string(), executor: z.string() }),
});
export type LaunchOptions = z.infer<typeof LaunchOptionsSchema>;

/** `POST /api/v1/dashboard/codes` (bearer): a one-time login code for `berth dashboard`. */
export const DashboardCodeSchema = z.object({
  code: z.string(),
  expiresAt: z.string().meta({ description: 'ISO time; the code is valid once, until then' }),
});
export type DashboardCode = z.infer<typeof DashboardCodeSchema>;

/** Body of `POST /api/v1/dashboard/login`. */
export const DashboardLoginRequestSchema = z.strictObject({ code: z.string().min(1).max(200) });

/** `POST /api/v1/dashboard/login`: the CSRF token of the new cookie session (told this once only). */
export const DashboardSessionSchema = z.object({
  csrf: z.string().meta({ description: 'Send it as header `x-berth-csrf` on every request made with the cookie (GET too); the cookie alone is refused' }),
});
export type DashboardSession = z.infer<typeof DashboardSessionSchema>;

/** `GET /api/v1/dashboard/session` (cookie + CSRF token): the session is live. It never tells the token. */
export const DashboardSessionStateSchema = z.object({ loggedIn: z.literal(true) });
export type DashboardSessionState = z.infer<typeof DashboardSessionStateSchema>;

// Compile-time checks that the wire schemas and the service types cannot drift apart.
type Equals<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const viewMatches: Equals<z.infer<typeof SessionViewSchema>, SessionView> = true;
const stageMatches: Equals<z.infer<typeof StageRecordSchema>, StageRecord> = true;
const eventMatches: Equals<z.infer<typeof SessionEventSchema>, SessionEvent> = true;
const launchMatches: z.infer<typeof LaunchRequestSchema> extends LaunchRequest ? true : false = true;
void [viewMatches, stageMatches, eventMatches, launchMatches];
