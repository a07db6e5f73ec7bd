/** `berth logs [-f] [--previous] ID`: the agent's output, raw bytes to stdout/stderr; an ACP agent's transcript (logs-acp.ts). @module */
import { write } from '../context.js';
import { ControllerLostError, dataDirArgs, ExitCode, UsageError } from '../exit-codes.js';
import { runAcpLogs } from './logs-acp.js';
import type { CliContext, ParsedCommand } from '../types.js';

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const fromText = cmd.values.from as string | undefined;
  if (fromText !== undefined && !/^\d+$/.test(fromText)) throw new UsageError('logs: --from must be a non-negative integer', 'logs');
  const from = fromText !== undefined ? Number(fromText) : undefined;
  const previous = cmd.values.previous === true;
  // A previous run has ended: there is nothing to follow (as kubectl logs -f --previous).
  const follow = cmd.values.follow === true && !previous;
  const id = cmd.positionals[0] ?? '';
  const client = ctx.client();
  // an ACP agent's stdout is the protocol: its transcript is what it said (a stopped session, the previous run: the raw stderr)
  const view = previous ? null : await client.get(id);
  if (view?.protocol === 'acp' && view.state === 'ready') return runAcpLogs(ctx, id, { ...(from !== undefined ? { from } : {}), follow });
  let next = from ?? 0;
  try {
    for await (const chunk of client.logs(id, { ...(from !== undefined ? { from } : {}), follow, ...(previous ? { previous } : {}), signal: ctx.interrupted })) {
      await write(chunk.stream === 'stderr' ? ctx.io.stderr : ctx.io.stdout, chunk.data);
      next = chunk.seq + 1;
    }
  } catch (err) {
    // An answer from the controller (404, 409, …) keeps its meaning; a stream cut mid-way (serve
    // died or restarted) says where to pick up again.
    const name = (err as Error | undefined)?.name;
    if (!follow || ctx.interrupted.aborted || name === 'BerthApiError' || name === 'ControllerUnreachableError') throw err;
    const cause = (err as Error).cause;
    const reason = (err as Error).name === 'StreamBrokenError' && cause instanceof Error && cause.message !== '' ? cause.message : (err as Error).message;
    throw new ControllerLostError(reason, `berth ${dataDirArgs(ctx.dataDirFlag)}logs -f --from ${next} ${id}`);
  }
  if (follow && !ctx.interrupted.aborted) {
    const agent = (await client.get(id).catch(() => null))?.agentProcess;
    if (agent?.status === 'exited') await write(ctx.io.stderr, `agent exited ${agent.exitCode === null ? 'without an exit code (killed by a signal, or lost)' : `with code ${agent.exitCode}`}\n`);
  }
  return ExitCode.ok;
}
