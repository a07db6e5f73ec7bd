/**
 * The wire of ACP sessions (agents agentctl speaks the Agent Client Protocol with): answering a
 * permission request (`POST …/approve`) and the agent's typed events (`GET …/agent-events`). The
 * events are agentctl's records (protocol/acp.ts AcpEvent): their ACP payloads (a `session/update`,
 * a tool call) are as the agent sent them. Browser-safe.
 * @module
 */
import { z } from 'zod';
import { AcpEventSchema } from '../protocol/index.js';

/** Longest `GET …/agent-events?wait=` may wait for a new event, in ms (agentctl's own limit). */
export const MAX_AGENT_EVENTS_WAIT_MS = 20_000;

/** Body of `POST /api/v1/sessions/{id}/approve`. */
export const ApproveRequestSchema = z.strictObject({
  /** The request to answer; absent: the oldest pending one. */
  requestId: z.string().min(1).max(200).optional(),
  /** Deny instead of allow (the agent leaves the tool call undone). */
  deny: z.boolean().optional(),
  /** Allow (or deny) this kind of call from now on, where the agent offers it. */
  always: z.boolean().optional(),
});
export type ApproveRequest = z.infer<typeof ApproveRequestSchema>;

/** `POST …/approve`: the request that was answered and how. */
export const ApproveResultSchema = z.object({
  requestId: z.string(),
  decision: z.enum(['allow', 'deny']),
  always: z.boolean(),
  /** The tool call's title as the agent gave it (e.g. "Write NOTES.md"); null when it gave none. */
  title: z.string().nullable(),
  /** Requests still pending after this one. */
  pending: z.number().int().nonnegative(),
});
export type ApproveResult = z.infer<typeof ApproveResultSchema>;

const AgentEventSchema = z.object({
  seq: z.number().int().nonnegative(),
  at: z.string(),
  event: AcpEventSchema.meta({ description: 'session, prompt, update (an ACP session/update as sent), permission, permission_answer, turn_end or error' }),
});
export type AgentEvent = z.infer<typeof AgentEventSchema>;

/** `GET /api/v1/sessions/{id}/agent-events?from=N`: one page of the ACP agent's recorded events. */
export const AgentEventPageSchema = z.object({
  events: z.array(AgentEventSchema),
  /** Where the next page starts. */
  next: z.number().int().nonnegative(),
  /** Oldest retained sequence number: when greater than `from`, earlier events were dropped. */
  firstAvailable: z.number().int().nonnegative(),
  /** The agent has exited and `next` is past its last event. */
  complete: z.boolean(),
});
export type AgentEventPage = z.infer<typeof AgentEventPageSchema>;
