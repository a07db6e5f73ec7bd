/**
 * A session's egress on the wire (issue 23): what `GET /api/v1/sessions/{id}/egress` answers — the
 * summary of the connections its agent made through Berth's egress proxy, and one page of their
 * records (ascending `seq`; times as ISO 8601).
 * @module
 */
import { z } from 'zod';

/** The most records one page holds (`limit` and `tail`). */
export const MAX_EGRESS_PAGE = 10_000;

const count = z.number().int().nonnegative();

const EgressRecordSchema = z.object({
  /** Increasing; pass the last one as `after` for the next page. */
  seq: count,
  host: z.string(),
  port: z.number().int().min(0).max(65_535),
  /** `CONNECT` for a tunnel, else the HTTP method of a forwarded request. */
  method: z.string(),
  allowed: z.boolean(),
  /** Why it was denied (or how an allowed one ended badly); null otherwise. */
  reason: z.string().nullable(),
  /** The upstream HTTP status of a forwarded request; null for a tunnel. */
  status: z.number().int().nullable(),
  bytesUp: count,
  bytesDown: count,
  startedAt: z.string(),
  endedAt: z.string(),
  /** The provider of a brokered request (the proxy added the credential); null otherwise. */
  broker: z.string().nullable(),
  inputTokens: count.nullable(),
  outputTokens: count.nullable(),
});
export type EgressRecordView = z.infer<typeof EgressRecordSchema>;

const EgressSummarySchema = z.object({
  /** Over the records kept (the latest 10,000 of the session). */
  connections: count,
  denied: count,
  bytesUp: count,
  bytesDown: count,
  /** When the latest connection ended; null when there is none. */
  lastAt: z.string().nullable(),
  brokerRequests: count,
  inputTokens: count,
  outputTokens: count,
});
export type EgressSummaryView = z.infer<typeof EgressSummarySchema>;

export const EgressPageSchema = z.object({ summary: EgressSummarySchema, records: z.array(EgressRecordSchema) });
export type EgressPage = z.infer<typeof EgressPageSchema>;

/** Which records a page holds: from after `after` (at most `limit`, 0: none, the summary only), or the latest `tail`. */
export interface EgressQuery {
  after?: number;
  limit?: number;
  tail?: number;
}
