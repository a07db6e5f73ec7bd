/** `berth egress ID`: the connections the session's agent made through the egress proxy, latest last, and their summary. @module */
import type { EgressPage, EgressRecordView } from '../../api/index.js';
import { MAX_EGRESS_PAGE } from '../../api/index.js';
import { write } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import { egressSummaryText, formatBytes, formatData, formatTable } from '../output.js';
import type { CliContext, ParsedCommand } from '../types.js';

/** Records shown without --limit. */
const DEFAULT_LIMIT = 1000;

/** `allowed`, or `denied: <reason>`. */
function verdict(r: EgressRecordView): string {
  if (r.allowed) return r.reason ? `allowed: ${r.reason}` : 'allowed';
  return r.reason ? `denied: ${r.reason}` : 'denied';
}

/** `anthropic 1,234/567` for a brokered request, `-` otherwise. */
function brokerText(r: EgressRecordView): string {
  if (r.broker === null) return '-';
  const n = (x: number | null): string => (x === null ? '?' : x.toLocaleString('en-US'));
  return r.inputTokens === null && r.outputTokens === null ? r.broker : `${r.broker} ${n(r.inputTokens)}/${n(r.outputTokens)}`;
}

/** The table of records (oldest first), then the summary line. */
export function renderEgress(id: string, page: EgressPage): string {
  const { summary, records } = page;
  if (summary.connections === 0) return `no egress recorded for ${id} (only sessions whose profile has network: go through the egress proxy)\n`;
  const rows = records.map((r) => [
    r.startedAt.replace(/\.\d+Z$/, 'Z'),
    verdict(r),
    r.method,
    `${r.host}:${r.port}`,
    r.status === null ? '-' : String(r.status),
    formatBytes(r.bytesUp),
    formatBytes(r.bytesDown),
    brokerText(r),
  ]);
  const shown = records.length < summary.connections ? ` (the latest ${records.length.toLocaleString('en-US')} shown)` : '';
  return `${formatTable(['TIME', 'VERDICT', 'METHOD', 'HOST:PORT', 'STATUS', 'UP', 'DOWN', 'BROKER IN/OUT'], rows)}\n${egressSummaryText(summary)}${shown}\n`;
}

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const limitText = cmd.values.limit as string | undefined;
  if (limitText !== undefined && (!/^\d{1,5}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_EGRESS_PAGE)) {
    throw new UsageError(`egress: --limit must be an integer from 1 to ${MAX_EGRESS_PAGE}`, 'egress');
  }
  const id = cmd.positionals[0] ?? '';
  const page = await ctx.client().egress.get(id, { tail: limitText !== undefined ? Number(limitText) : DEFAULT_LIMIT });
  if (ctx.output === 'json' || ctx.output === 'yaml') await write(ctx.io.stdout, formatData(page, ctx.output));
  else await write(ctx.io.stdout, renderEgress(id, page));
  return ExitCode.ok;
}
