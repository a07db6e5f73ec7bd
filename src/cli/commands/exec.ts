/** `berth exec ID -- CMD...`: runs a command in the workspace and exits with its exit code. @module */
import { constants } from 'node:os';
import { write } from '../context.js';
import { parseEnvPairs } from '../env-flags.js';
import { dataDirArgs, lostDuring } from '../exit-codes.js';
import type { CliContext, ParsedCommand } from '../types.js';

/** The shell convention for an exit status: the code, or 128 + signal number. */
export function exitStatusOf(result: { exitCode: number | null; signal: string | null }): number {
  if (result.exitCode !== null) return result.exitCode;
  const num = result.signal ? (constants.signals as Record<string, number | undefined>)[result.signal] : undefined;
  return 128 + (num ?? 1);
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Uint8Array> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : c);
  return Buffer.concat(chunks);
}

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const id = cmd.positionals[0] ?? '';
  const env = parseEnvPairs(cmd.values.env as string[] | undefined, '--env', 'exec');
  const client = ctx.client();
  const stdin = cmd.values.stdin === true ? await readAll(ctx.io.stdin) : undefined;
  // Output is written in order; a promise chain keeps stdout/stderr interleaving as received.
  let pending = Promise.resolve();
  const result = await client
    .exec(
    id,
    {
      argv: cmd.rest,
      ...(typeof cmd.values.cwd === 'string' ? { cwd: cmd.values.cwd } : {}),
      ...(Object.keys(env).length > 0 ? { env } : {}),
      ...(stdin !== undefined ? { stdin } : {}),
    },
    {
      signal: ctx.interrupted,
      onOutput: (chunk) => {
        pending = pending.then(() => write(chunk.stream === 'stderr' ? ctx.io.stderr : ctx.io.stdout, chunk.data));
      },
    },
  )
    .catch((err: unknown) => {
      // Exit 5, never a code the command could have returned itself: its real status is unknown.
      throw lostDuring(err, `the command's exit status is unknown (it may still be running in the workspace); once berth serve runs again, look with: berth ${dataDirArgs(ctx.dataDirFlag)}exec ${id} -- ps -ef`);
    });
  await pending;
  return exitStatusOf(result);
}
