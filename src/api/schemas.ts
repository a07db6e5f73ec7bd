/**
 * The Berth HTTP API wire: zod schemas for every request and response body, streaming message
 * and the error envelope, and the wire types derived from them (`z.infer`). The schemas are the
 * source: the server decodes requests with them, the typed client decodes responses, the OpenAPI
 * document is generated from them, and the controller's service speaks these types. Browser-safe
 * (no Node APIs; `src/api/tsconfig.browser.json` checks it).
 * @module
 */
import { z } from 'zod';
import { ENV_NAME } from '../shared/env-name.js';
import { LAUNCH_LIMITS, launchRequestProblems } from '../shared/launch-limits.js';

/**
 * Life cycle of a session as users see it: `launching` (a launch is in progress, see its stages),
 * `ready` (workspace up, agentctl connected, agent started), `stopping`, `stopped` (agentctl and
 * agent stopped, workspace kept: `resume` brings it back), `failed` (the last launch or resume
 * failed and was rolled back, see `error`), `removing`.
 */
const SessionStateSchema = z.enum(['launching', 'ready', 'stopping', 'stopped', 'suspended', 'failed', 'removing']);
export type SessionState = z.infer<typeof SessionStateSchema>;

const StageStatusSchema = z.enum(['running', 'waiting', 'succeeded', 'failed']);

/** One thing a stage waited for (a Kubernetes reason or event while it ran). */
const StageWaitSchema = z.object({ at: z.string(), reason: z.string(), message: z.string() });

/** One launch stage (e.g. `workspace`, `agentctl_start`, `agentctl_connect`, `agent_start`). */
const StageRecordSchema = z.object({
  name: z.string(),
  status: StageStatusSchema,
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
  /** While waiting or after failing: a short machine-readable reason (`ImagePullBackOff`, `CloneFailed` …). */
  reason: z.string().nullable(),
  /** Human-readable detail for the reason; never contains secrets. */
  message: z.string().nullable(),
  /** What the stage waited for, in order, the latest few kept (the controller's MAX_STAGE_WAITS). Absent on old rows. */
  waits: z
    .array(StageWaitSchema)
    .optional()
    .meta({ description: 'What the stage waited for, in order (Kubernetes: scheduling, image pull, volume binding, warning events …).' }),
});
export type StageRecord = z.infer<typeof StageRecordSchema>;

const RepositoryRefSchema = z
  .strictObject({
    /** A clone URL (file://, git://, https://) … */
    url: z.string().min(1).optional(),
    /** … or a local repository path (the local executor uses `git worktree`/clone from it). */
    path: z.string().min(1).optional(),
    branch: z.string().min(1).optional(),
  })
  .meta({ description: 'A clone URL or a local repository path (exactly one), with an optional branch.' });
export type RepositoryRef = z.infer<typeof RepositoryRefSchema>;

/** Body of `POST /api/v1/sessions`. */
export const LaunchRequestSchema = z
  .strictObject({
    /**
     * A URL with credentials (`https://user:token@host/x.git`) is accepted: see SessionView.repository.credentials.
     * Omitted (Kubernetes executors only): the session starts in an empty workspace.
     */
    repository: RepositoryRefSchema.optional().meta({ description: 'Required for local executors; a Kubernetes session without one starts in an empty workspace.' }),
    /** Agent profile name from the config (default: `demo`, the scripted demo agent). */
    agent: z.string().min(1).optional(),
    /** Executor name from the config (default: `local`). */
    executor: z.string().min(1).optional(),
    /** Optional human name. */
    name: z.string().optional().meta({ description: 'A unique human name; every route that takes a session id also takes it. 1-63 characters: letters, digits, ".", "_", "-".' }),
    /** Extra environment for the agent. */
    env: z.record(z.string().regex(ENV_NAME, 'must be a valid environment variable name'), z.string()).optional(),
    /** Names of controller-side secrets approved for this session (their values are injected, never stored in plain text). */
    secretEnv: z.array(z.string().regex(ENV_NAME)).optional(),
    /** Prompt/task text handed to the agent (as BERTH_PROMPT and the profile's argv template). */
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
export type LaunchRequest = z.infer<typeof LaunchRequestSchema>;

const SessionErrorSchema = z.object({ message: z.string(), stage: z.string().nullable() });
export type SessionError = z.infer<typeof SessionErrorSchema>;

const AgentProcessViewSchema = z.object({
  id: z.string(),
  /** `lost`: its agentctl died (killed, crashed, container restarted) and the agent with it; only `berth resume` starts it again. */
  status: z.enum(['running', 'exited', 'lost']).meta({ description: '`lost`: its agentctl died and the agent with it; `berth resume` starts it again.' }),
  exitCode: z.number().int().nullable(),
  /** Why the agent is lost (status `lost` only). */
  lostReason: z.string().optional(),
  /** ACP agents while they run: turns so far, whether one is in flight, and the permission requests waiting for a person (`berth approve`). */
  turns: z.number().int().nonnegative().optional(),
  turnRunning: z.boolean().optional(),
  pendingApprovals: z.number().int().nonnegative().optional().meta({ description: 'ACP agents: permission requests waiting for a person (answer with POST …/approve)' }),
  /** ACP agents while they run: what the conversation has used so far, over every run that continued it. */
  usage: z
    .object({
      toolCalls: z.number().int().nonnegative(),
      /** Summed over the turns' reported usage; null until the agent reports any. */
      inputTokens: z.number().nonnegative().nullable(),
      outputTokens: z.number().nonnegative().nullable(),
      totalTokens: z.number().nonnegative().nullable(),
      /** The latest context window the agent reported (tokens used of its size). */
      context: z.object({ used: z.number().nonnegative(), size: z.number().nonnegative() }).nullable(),
      /** The latest cost the agent reported for the session. */
      cost: z.object({ amount: z.number(), currency: z.string() }).nullable(),
    })
    .optional()
    .meta({ description: 'ACP agents: tool calls, tokens and cost so far, where the agent reports them' }),
});
export type AgentProcessView = z.infer<typeof AgentProcessViewSchema>;

/** The repository of a session as shown: the URL never carries credentials. */
const RepositoryViewSchema = z.object({
  url: z.string().optional().meta({ description: 'The clone URL, never with credentials (they are split off at launch).' }),
  path: z.string().optional(),
  branch: z.string().optional(),
  /** True when the launch URL carried a credential; it is stored encrypted and used only to clone. */
  credentials: z.boolean().optional().meta({ description: 'True when the launch URL carried a credential: stored encrypted, used only to clone.' }),
});

export const SessionViewSchema = z.object({
  id: z.string(),
  name: z.string().nullable(),
  executor: z.string(),
  agent: z.string(),
  repository: RepositoryViewSchema,
  state: SessionStateSchema,
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Stages of the most recent launch/resume. */
  stages: z.array(StageRecordSchema),
  /** Where the workspace lives (a local path, or `/workspace` in a Pod). */
  workspacePath: z.string().nullable(),
  error: SessionErrorSchema.nullable(),
  agentProcess: AgentProcessViewSchema.nullable(),
  /** How agentctl talks to the agent: `acp` (the Agent Client Protocol: turns, approvals, typed events) or `raw` (its stdio). Absent: raw. */
  protocol: z.enum(['raw', 'acp']).optional(),
});
export type SessionView = z.infer<typeof SessionViewSchema>;

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
  /** The session is gone (its workspace destroyed); the last event of a session. */
  z.object({ type: z.literal('removed'), sessionId: z.string(), at: z.string() }).meta({ description: 'The session was removed (its workspace destroyed).' }),
]);
export type SessionEvent = z.infer<typeof SessionEventSchema>;

const ERROR_CODES = [
  'bad_request', // malformed JSON, wrong types, unknown fields, launch validation
  'body_too_large', // a request body over the route's limit (413)
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

const OutputChunkWireSchema = z.object({
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
      /** What the target's executor can do, as its type declares it (the form reads these, never the type). */
      capabilities: z.object({
        repositoryOptional: z.boolean().meta({ description: 'A launch may name no repository: the session starts in an empty workspace' }),
        removes: z.string().meta({ description: "What removing a session deletes, in words (\"the session's workspace directory …\")" }),
      }),
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
