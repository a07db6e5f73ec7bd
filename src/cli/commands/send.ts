/** `berth send ID TEXT`: a line of input for the agent, written to its stdin. @module */
import { ExitCode, UsageError } from '../exit-codes.js';
import type { CliContext, ParsedCommand } from '../types.js';

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const [id = '', text] = cmd.positionals;
  const eof = cmd.values.eof === true;
  if (text === undefined && !eof) throw new UsageError('send: missing TEXT (or --eof to close the agent\'s stdin)', 'send');
  const data = text === undefined ? '' : cmd.values['no-newline'] === true ? text : `${text}\n`;
  await ctx.client().sendInput(id, data, { eof });
  return ExitCode.ok;
}
