/** `berth logs [-f] ID`: the agent's output, raw bytes to stdout/stderr. @module */
import { write, type CliContext } from '../context.js';
import { ExitCode, UsageError } from '../exit-codes.js';
import type { ParsedCommand } from '../registry.js';

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const fromText = cmd.values.from as string | undefined;
  if (fromText !== undefined && !/^\d+$/.test(fromText)) throw new UsageError('logs: --from must be a non-negative integer', 'logs');
  const from = fromText !== undefined ? Number(fromText) : undefined;
  const follow = cmd.values.follow === true;
  for await (const chunk of ctx.client().logs(cmd.positionals[0] ?? '', { ...(from !== undefined ? { from } : {}), follow, signal: ctx.interrupted })) {
    await write(chunk.stream === 'stderr' ? ctx.io.stderr : ctx.io.stdout, chunk.data);
  }
  return ExitCode.ok;
}
