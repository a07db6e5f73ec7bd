/**
 * Processes of an instance: start, inspect, stdin, signals and sequenced output.
 * Output bytes travel base64-encoded so the API is binary-safe.
 * @module
 */
import { z } from 'zod';
import { EnvSchema } from './control.js';
import { AcpUsageSchema } from './acp.js';

export const ProcessKindSchema = z.enum(['agent', 'process']);

const SIGNALS = ['SIGTERM', 'SIGKILL', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGSTOP', 'SIGCONT'] as const;
const SignalSchema = z.enum(SIGNALS);
export type SignalName = z.infer<typeof SignalSchema>;

/** How agentctl talks to an agent: `raw` pipes bytes (stdin/stdout/stderr), `acp` is the Agent Client Protocol over its stdio. */
export const ProcessProtocolSchema = z.enum(['raw', 'acp']);
/**
 * Who answers an ACP agent's permission requests: `ask` holds each for a person (…/permissions),
 * `auto-edits` allows reads and edits itself and asks for the rest, `auto-all` allows everything.
 */
const ApprovePolicySchema = z.enum(['ask', 'auto-edits', 'auto-all']);
export type ApprovePolicy = z.infer<typeof ApprovePolicySchema>;

export const StartProcessRequestSchema = z.strictObject({
  /** argv; the first element is looked up in PATH. No shell is involved. */
  command: z.array(z.string()).min(1).max(4096),
  /** Working directory, relative to the workspace (default: the workspace root). */
  cwd: z.string().optional(),
  env: EnvSchema.default({}),
  kind: ProcessKindSchema.default('process'),
  /** A caller-chosen id (idempotent start); generated when absent. */
  id: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/)
    .optional(),
  protocol: ProcessProtocolSchema.default('raw'),
  /** ACP only: the permission policy. */
  approve: ApprovePolicySchema.default('ask'),
  /**
   * ACP only: the first turn's prompt, sent once the ACP session is open; with `resume_from`, only
   * when the resumed process never got to its first turn.
   */
  prompt: z.string().min(1).max(1024 * 1024).optional(),
  /**
   * ACP only: an earlier ACP process of this instance whose conversation this one continues: its
   * last ACP session is loaded (`session/load`) when the agent can, otherwise a new one is opened;
   * the `session` event says which and why.
   */
  resume_from: z
    .string()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/)
    .optional(),
  /**
   * The agent's own state directory, by name: `<instance state>/agents/<name>` (0700), kept with
   * the instance's process records (on Kubernetes, on the workspace volume), so it survives stop,
   * resume and Pod replacement. `{{agent_state}}` in `command` and `env` values becomes its path.
   */
  agent_state: z
    .string()
    .regex(/^[a-z0-9][a-z0-9._-]{0,62}$/, { error: 'must be a lowercase name ([a-z0-9._-], at most 63)' })
    .optional(),
  /**
   * With `agent_state`: files written into it (0600) unless they exist there already, e.g. a
   * subscription login copied once per session (the agent may refresh its copy). Never recorded.
   */
  agent_files: z
    .array(
      z.strictObject({
        path: z
          .string()
          .min(1)
          .max(256)
          .refine((p) => !p.startsWith('/') && !p.split('/').some((s) => s === '..' || s === '' || s === '.'), { message: 'must be a relative path without . or .. segments' }),
        data_base64: z.string().max(1024 * 1024),
      }),
    )
    .max(16)
    .optional(),
  /** ACP only: the agent's session mode to set once the session is open (`session/set_mode`); the session fails without it. */
  mode: z.string().min(1).max(128).optional(),
});
export type StartProcessRequest = z.input<typeof StartProcessRequestSchema>;

export const ProcessStatusSchema = z.enum(['running', 'exited']);

export const ProcessInfoSchema = z.object({
  id: z.string(),
  kind: ProcessKindSchema,
  command: z.array(z.string()),
  cwd: z.string(),
  status: ProcessStatusSchema,
  pid: z.number().int().nullable(),
  exit_code: z.number().int().nullable(),
  signal: z.string().nullable(),
  started_at: z.string(),
  ended_at: z.string().nullable(),
  /** Sequence number the next output chunk will get (= number of chunks so far). */
  next_seq: z.number().int(),
  /**
   * True when the process was still running when an earlier agentctl run died (or was killed):
   * it is reported as exited with `exit_code` and `signal` null because its real exit status is
   * unknown. Processes that exited while that run was alive keep their recorded status and
   * `orphaned: false`; their output stays replayable either way.
   */
  orphaned: z.boolean(),
  /** `acp` for an agent spoken to over the Agent Client Protocol (absent: raw). */
  protocol: ProcessProtocolSchema.optional(),
  /** ACP only, while the process runs: the session's state (see acp.ts). */
  acp: z
    .object({
      session_id: z.string().nullable(),
      state: z.enum(['starting', 'idle', 'prompting', 'closed']),
      turns: z.number().int().nonnegative(),
      pending_permissions: z.number().int().nonnegative(),
      /** Sequence number the next event will get (see `…/events`). */
      next_event_seq: z.number().int().nonnegative(),
      /** The conversation's usage so far, earlier runs it continues included. */
      usage: AcpUsageSchema.optional(),
    })
    .optional(),
});
export type ProcessInfo = z.infer<typeof ProcessInfoSchema>;

export const ProcessListSchema = z.object({ processes: z.array(ProcessInfoSchema) });

export const StdinRequestSchema = z.strictObject({
  data: z.string().default(''),
  encoding: z.enum(['utf8', 'base64']).default('utf8'),
  /** Close stdin after writing. */
  eof: z.boolean().default(false),
});
export type StdinRequest = z.input<typeof StdinRequestSchema>;

export const SignalRequestSchema = z.strictObject({ signal: SignalSchema });

const OutputStreamNameSchema = z.enum(['stdout', 'stderr']);
export type OutputStreamName = z.infer<typeof OutputStreamNameSchema>;

const OutputChunkSchema = z.object({
  seq: z.number().int().nonnegative(),
  stream: OutputStreamNameSchema,
  /** base64 of the raw bytes */
  data: z.string(),
  at: z.string(),
});
export type OutputChunk = z.infer<typeof OutputChunkSchema>;

export const OutputPageSchema = z.object({
  chunks: z.array(OutputChunkSchema),
  /** Where to continue reading from. */
  next: z.number().int().nonnegative(),
  /** Oldest sequence number still retained (older ones were dropped by the retention cap). */
  first_available: z.number().int().nonnegative(),
  /** The process has exited and `next` is past its last chunk. */
  complete: z.boolean(),
});
export type OutputPage = z.infer<typeof OutputPageSchema>;

/**
 * Messages on `GET …/processes/{id}/stream?from=N` (WebSocket, server → client).
 * An `error` answers a client message (StreamClientMessage) that was malformed or could not be
 * applied (`bad_request`, `conflict`, …); it does not end the stream: only `exit` or a close does.
 */
export const StreamMessageSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('output'), chunk: OutputChunkSchema }),
  /** Chunks `from`..`to-1` were dropped by retention and can no longer be replayed. */
  z.object({ type: z.literal('gap'), from: z.number().int(), to: z.number().int() }),
  z.object({
    type: z.literal('exit'),
    exit_code: z.number().int().nullable(),
    signal: z.string().nullable(),
    next: z.number().int(),
  }),
  z.object({ type: z.literal('error'), code: z.string(), message: z.string() }),
]);
export type StreamMessage = z.infer<typeof StreamMessageSchema>;

/** Largest raw stdin payload of one `stdin` stream message (its base64 JSON frame stays under the socket's frame cap). */
export const MAX_STREAM_STDIN_BYTES = 32 * 1024;
/** Largest WebSocket frame agentctl accepts on `…/stream` (client → server). */
export const MAX_STREAM_FRAME_BYTES = 64 * 1024;

const Base64Schema = z.string().regex(/^[A-Za-z0-9+/]*={0,2}$/, 'must be base64');

/**
 * Messages a client may send on `…/processes/{id}/stream` (WebSocket, client → server, JSON text
 * frames), so one socket carries a process's output out and its stdin in:
 *  - `stdin`: raw bytes (base64) written to the process's stdin, in message order;
 *  - `eof`: closes the process's stdin (later `stdin` messages get a `conflict` error);
 *  - `signal`: sends a signal to the process group, like `POST …/signal`.
 * A malformed message gets an `error` (`bad_request`) back and is otherwise ignored: the socket
 * stays open and the output keeps flowing.
 */
export const StreamClientMessageSchema = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('stdin'), data: Base64Schema }),
  z.strictObject({ type: z.literal('eof') }),
  z.strictObject({ type: z.literal('signal'), signal: SignalSchema }),
]);
export type StreamClientMessage = z.infer<typeof StreamClientMessageSchema>;
