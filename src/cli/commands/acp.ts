/** `berth cancel ID` and `berth approve ID [--deny] [--always] [--request R]`: the person in the loop of an ACP session. @module */
import { write } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { formatData } from '../output.js';
import type { CliContext, ParsedCommand } from '../types.js';

export async function cancel(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const id = cmd.positionals[0] ?? '';
  await ctx.client().acp.cancel(id);
  await write(ctx.io.stdout, `Cancelled the turn in flight of session ${id} (it ends as cancelled: berth logs ${id}).\n`);
  return ExitCode.ok;
}

export async function approve(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const id = cmd.positionals[0] ?? '';
  const requestId = cmd.values.request as string | undefined;
  const result = await ctx.client().acp.approve(id, {
    ...(requestId !== undefined ? { requestId } : {}),
    ...(cmd.values.deny === true ? { deny: true } : {}),
    ...(cmd.values.always === true ? { always: true } : {}),
  });
  if (ctx.output === 'json' || ctx.output === 'yaml') {
    await write(ctx.io.stdout, formatData(result, ctx.output));
    return ExitCode.ok;
  }
  const verb = result.decision === 'allow' ? 'Allowed' : 'Denied';
  const more = result.pending > 0 ? `; ${result.pending} more pending (berth approve ${id} again)` : '';
  await write(ctx.io.stdout, `${verb}${result.always ? ' (always)' : ''}: ${result.title ?? 'the tool call'} (request ${result.requestId})${more}.\n`);
  return ExitCode.ok;
}
