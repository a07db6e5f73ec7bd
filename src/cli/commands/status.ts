/** `berth status ID`: state, stages and timings; the egress summary when the agent's connections went through the egress proxy. @module */
import { write } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { renderStatus } from '../output.js';
import type { CliContext, ParsedCommand } from '../types.js';

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const client = ctx.client();
  const view = await client.get(cmd.positionals[0] ?? '');
  // the summary alone (limit 0); a controller without the route (an older one) shows no egress line
  const egress = ctx.output === 'table' ? (await client.egress.get(view.id, { limit: 0 }).catch(() => null))?.summary : undefined;
  await write(ctx.io.stdout, renderStatus(view, ctx.output, ctx.now(), egress));
  return ExitCode.ok;
}
