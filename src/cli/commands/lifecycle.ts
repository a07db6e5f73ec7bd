/** `berth stop ID` and `berth rm [--force] ID`. @module */
import { write } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { formatData } from '../output.js';
import type { CliContext, ParsedCommand } from '../types.js';

export async function stop(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const view = await ctx.client().stop(cmd.positionals[0] ?? '');
  if (ctx.output === 'json' || ctx.output === 'yaml') await write(ctx.io.stdout, formatData(view, ctx.output));
  else await write(ctx.io.stdout, `Session ${view.id} is ${view.state}; the workspace is kept (bring it back with: berth resume ${view.id})\n`);
  return ExitCode.ok;
}

export async function rm(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const id = cmd.positionals[0] ?? '';
  await ctx.client().remove(id, { force: cmd.values.force === true });
  await write(ctx.io.stdout, `Session ${id} removed.\n`);
  return ExitCode.ok;
}
