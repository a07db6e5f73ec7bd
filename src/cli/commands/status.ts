/** `berth status ID`: state, stages and timings. @module */
import { write } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { renderStatus } from '../output.js';
import type { CliContext, ParsedCommand } from '../types.js';

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const view = await ctx.client().get(cmd.positionals[0] ?? '');
  await write(ctx.io.stdout, renderStatus(view, ctx.output, ctx.now()));
  return ExitCode.ok;
}
