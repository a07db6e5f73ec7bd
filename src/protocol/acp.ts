/**
 * Agents spoken to over the Agent Client Protocol (ACP): turns, cancel, permission requests and the
 * typed events agentctl records for an ACP process (`GET …/processes/{id}/events?from=N`).
 * The ACP payloads themselves (a `session/update`, a tool call) are passed through as the agent sent
 * them: their shape is the ACP schema's (v1), not Berth's.
 * @module
 */
import { z } from 'zod';

/** `POST …/processes/{id}/prompt`: a new turn (202 with PromptAccepted; 409 while a turn runs). */
export const PromptRequestSchema = z.strictObject({ text: z.string().min(1).max(1024 * 1024) });

export const PromptAcceptedSchema = z.object({ turn: z.number().int().positive() });
export type PromptAccepted = z.infer<typeof PromptAcceptedSchema>;

const PermissionOptionSchema = z.object({
  option_id: z.string(),
  name: z.string(),
  /** ACP's PermissionOptionKind: allow_once, allow_always, reject_once, reject_always. */
  kind: z.string(),
});

/** A permission request the agent is waiting on. */
const PermissionRequestInfoSchema = z.object({
  id: z.string(),
  turn: z.number().int().nullable(),
  /** The ACP ToolCallUpdate the request is about (title, kind, content such as diffs, locations). */
  tool_call: z.record(z.string(), z.unknown()),
  options: z.array(PermissionOptionSchema),
  requested_at: z.string(),
});
export type PermissionRequestInfo = z.infer<typeof PermissionRequestInfoSchema>;

export const PermissionListSchema = z.object({ permissions: z.array(PermissionRequestInfoSchema) });

/**
 * `POST …/processes/{id}/permissions/{request id}`: the answer, either one of the request's
 * options by id, or a decision (`allow` picks allow_once, with `always` allow_always; `deny` picks
 * reject_once, with `always` reject_always; the other of the pair when only it is offered). 204.
 */
export const PermissionAnswerSchema = z
  .strictObject({
    option_id: z.string().min(1).optional(),
    decision: z.enum(['allow', 'deny']).optional(),
    always: z.boolean().default(false),
  })
  .refine((a) => (a.option_id === undefined) !== (a.decision === undefined), { message: 'give exactly one of option_id and decision' });
export type PermissionAnswer = z.input<typeof PermissionAnswerSchema>;

/**
 * What an ACP conversation has cost so far, over every run that continued it: tool calls the agent
 * reported, tokens summed over the turns' reported usage (null until the agent reports any), and
 * the latest context window and cost of its `usage_update`s (null when it sends none).
 */
export const AcpUsageSchema = z.object({
  tool_calls: z.number().int().nonnegative(),
  input_tokens: z.number().nonnegative().nullable(),
  output_tokens: z.number().nonnegative().nullable(),
  total_tokens: z.number().nonnegative().nullable(),
  context: z.object({ used: z.number().nonnegative(), size: z.number().nonnegative() }).nullable(),
  cost: z.object({ amount: z.number(), currency: z.string() }).nullable(),
});
export type AcpUsage = z.infer<typeof AcpUsageSchema>;

/**
 * How a process continued an earlier one's conversation: `from` is that process, `session_id` its
 * last ACP session (null: it never opened one); `loaded` when `session/load` restored it, otherwise
 * `reason` says why a new session was opened instead.
 */
const ResumeSchema = z.object({
  from: z.string(),
  session_id: z.string().nullable(),
  loaded: z.boolean(),
  reason: z.string().nullable(),
  /** The conversation's usage when the earlier run ended (this run's counts start from it). */
  usage: AcpUsageSchema.optional(),
});
export type AcpResume = z.infer<typeof ResumeSchema>;

/** Who answered a permission request. */
const AnsweredBySchema = z.enum(['person', 'policy', 'cancel', 'exit']);

/**
 * One recorded event of an ACP process, in the order agentctl saw them:
 *  - `session`: the ACP session is open (agent's name and version when it says them); for a process
 *    that continues an earlier one's conversation, `resume` says whether it was loaded and, if not, why;
 *  - `prompt`: turn `turn` started with `text`;
 *  - `update`: a `session/update` of the agent (the ACP SessionUpdate as sent: `sessionUpdate` names its kind);
 *    `replay` marks the history an agent streams back while loading a session;
 *  - `permission`: the agent asks; `permission_answer`: the request was answered (or cancelled);
 *  - `turn_end`: the turn ended with ACP's `stop_reason` (`cancelled` after a cancel) and usage when reported;
 *  - `error`: the ACP conversation failed (initialize, session/new, a prompt request); `turn` when it was one.
 */
export const AcpEventSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('session'),
    session_id: z.string(),
    agent: z.object({ name: z.string(), version: z.string() }).nullable(),
    resume: ResumeSchema.optional(),
  }),
  z.object({ type: z.literal('prompt'), turn: z.number().int(), text: z.string() }),
  z.object({ type: z.literal('update'), turn: z.number().int().nullable(), update: z.record(z.string(), z.unknown()), replay: z.literal(true).optional() }),
  z.object({ type: z.literal('permission'), request: PermissionRequestInfoSchema }),
  z.object({
    type: z.literal('permission_answer'),
    id: z.string(),
    outcome: z.enum(['selected', 'cancelled']),
    option_id: z.string().nullable(),
    by: AnsweredBySchema,
  }),
  z.object({ type: z.literal('turn_end'), turn: z.number().int(), stop_reason: z.string(), usage: z.record(z.string(), z.unknown()).nullable() }),
  z.object({ type: z.literal('error'), turn: z.number().int().nullable(), message: z.string() }),
]);
export type AcpEvent = z.infer<typeof AcpEventSchema>;

const RecordedEventSchema = z.object({ seq: z.number().int().nonnegative(), at: z.string(), event: AcpEventSchema });

/** `GET …/processes/{id}/events?from=N&limit=M`: like an OutputPage, of events. */
export const EventPageSchema = z.object({
  events: z.array(RecordedEventSchema),
  next: z.number().int().nonnegative(),
  first_available: z.number().int().nonnegative(),
  /** The process has exited and `next` is past its last event. */
  complete: z.boolean(),
});
export type EventPage = z.infer<typeof EventPageSchema>;
