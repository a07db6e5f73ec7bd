/** `berth ls`: the sessions as a table (or wide/json/yaml). @module */
import { write } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { renderSessionList } from '../output.js';
import type { CliContext } from '../types.js';

export async function run(ctx: CliContext): Promise<number> {
  const sessions = await ctx.client().list();
  await write(ctx.io.stdout, renderSessionList(sessions, ctx.output, ctx.now()));
  return ExitCode.ok;
}
