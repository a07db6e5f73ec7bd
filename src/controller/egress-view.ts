/**
 * A session's egress as the API shows it (issue 23): the summary of the connections its agent made
 * through the egress proxy and one page of their records, read from the inventory (times as ISO
 * 8601). The latest `tail` records are read through the kept ones (at most 10,000 a session): the
 * inventory lists ascending only.
 * @module
 */
import { MAX_EGRESS_PAGE, type EgressPage, type EgressQuery, type EgressRecordView, type EgressSummaryView } from '../api/index.js';
import type { EgressRecordRow, EgressSummary } from '../inventory/index.js';
import type { ManagerContext } from './context.js';
import { SessionNotFoundError } from './service.js';

const DEFAULT_LIMIT = 1000;

const iso = (ms: number): string => new Date(ms).toISOString();

function recordView(r: EgressRecordRow): EgressRecordView {
  return {
    seq: r.seq,
    host: r.host,
    port: r.port,
    method: r.method,
    allowed: r.allowed,
    reason: r.reason,
    status: r.status,
    bytesUp: r.bytesUp,
    bytesDown: r.bytesDown,
    startedAt: iso(r.startedAt),
    endedAt: iso(r.endedAt),
    broker: r.broker,
    inputTokens: r.inputTokens,
    outputTokens: r.outputTokens,
  };
}

function summaryView(s: EgressSummary): EgressSummaryView {
  return { ...s, lastAt: s.lastAt === null ? null : iso(s.lastAt) };
}

/** A bound of the query: an integer from 0 to MAX_EGRESS_PAGE (RangeError naming it otherwise). */
function bound(value: number | undefined, name: string): number | undefined {
  if (value !== undefined && (!Number.isSafeInteger(value) || value < 0 || value > MAX_EGRESS_PAGE)) throw new RangeError(`${name}: must be an integer from 0 to ${MAX_EGRESS_PAGE}`);
  return value;
}

/** SessionNotFoundError for an unknown session; RangeError for a bad bound or `tail` with `after`/`limit`. */
export async function readEgress(ctx: Pick<ManagerContext, 'store'>, id: string, query: EgressQuery): Promise<EgressPage> {
  const tail = bound(query.tail, 'tail');
  const limit = bound(query.limit, 'limit') ?? DEFAULT_LIMIT;
  if (query.after !== undefined && (!Number.isSafeInteger(query.after) || query.after < 0)) throw new RangeError('after: must be a non-negative integer');
  if (tail !== undefined && (query.after !== undefined || query.limit !== undefined)) throw new RangeError('tail: cannot be combined with after or limit');
  if (!(await ctx.store.getSession(id))) throw new SessionNotFoundError(id);
  const summary = await ctx.store.egressSummary(id);
  const want = tail ?? limit;
  let rows: EgressRecordRow[] = [];
  if (want > 0 && summary.connections > 0) rows = tail === undefined ? await ctx.store.listEgressRecords(id, { after: query.after ?? 0, limit }) : await latest(ctx, id, tail, summary.connections);
  return { summary: summaryView(summary), records: rows.map(recordView) };
}

/** The latest `tail` of a session's `kept` records: one listing when they all fit in `tail`, else read through (ascending) keeping the last ones. */
async function latest(ctx: Pick<ManagerContext, 'store'>, id: string, tail: number, kept: number): Promise<EgressRecordRow[]> {
  if (kept <= tail) return ctx.store.listEgressRecords(id, { limit: tail });
  let rows: EgressRecordRow[] = [];
  for (let after = 0; ; ) {
    const page = await ctx.store.listEgressRecords(id, { after, limit: MAX_EGRESS_PAGE });
    rows = [...rows, ...page].slice(-tail);
    const last = page.at(-1);
    if (page.length < MAX_EGRESS_PAGE || last === undefined) return rows;
    after = last.seq;
  }
}
