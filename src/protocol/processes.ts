/**
 * Processes of an instance: start, inspect, stdin, signals and sequenced output.
 * Output bytes travel base64-encoded so the API is binary-safe.
 * @module
 */
import { z } from 'zod';
import { EnvSchema } from './control.js';

export const ProcessKindSchema = z.enum(['agent', 'process']);
export type ProcessKind = z.infer<typeof ProcessKindSchema>;

export const SIGNALS = ['SIGTERM', 'SIGKILL', 'SIGINT', 'SIGHUP', 'SIGQUIT', 'SIGUSR1', 'SIGUSR2', 'SIGSTOP', 'SIGCONT'] as const;
export const SignalSchema = z.enum(SIGNALS);
export type SignalName = z.infer<typeof SignalSchema>;

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
});
export type StartProcessRequest = z.input<typeof StartProcessRequestSchema>;

export const ProcessStatusSchema = z.enum(['running', 'exited']);
export type ProcessStatus = z.infer<typeof ProcessStatusSchema>;

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
});
export type ProcessInfo = z.infer<typeof ProcessInfoSchema>;

export const ProcessListSchema = z.object({ processes: z.array(ProcessInfoSchema) });
export type ProcessList = z.infer<typeof ProcessListSchema>;

export const StdinRequestSchema = z.strictObject({
  data: z.string().default(''),
  encoding: z.enum(['utf8', 'base64']).default('utf8'),
  /** Close stdin after writing. */
  eof: z.boolean().default(false),
});
export type StdinRequest = z.input<typeof StdinRequestSchema>;

export const SignalRequestSchema = z.strictObject({ signal: SignalSchema });
export type SignalRequest = z.infer<typeof SignalRequestSchema>;

export const OutputStreamNameSchema = z.enum(['stdout', 'stderr']);
export type OutputStreamName = z.infer<typeof OutputStreamNameSchema>;

export const OutputChunkSchema = z.object({
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

/** Messages on `GET …/processes/{id}/stream?from=N` (WebSocket, server → client). */
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
