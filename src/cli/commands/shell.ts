/**
 * `berth shell ID`: an interactive shell under a PTY in the workspace. The local terminal goes
 * into raw mode (keys, Ctrl-C and Ctrl-D go to the remote PTY) and resizes are forwarded.
 * @module
 */
import { dataDirArgs, lostDuring } from '../exit-codes.js';
import type { CliContext, ParsedCommand } from '../types.js';
import { exitStatusOf } from './exec.js';

export async function run(ctx: CliContext, cmd: ParsedCommand): Promise<number> {
  const { stdin, stdout } = ctx.io;
  const tty = stdin.isTTY === true && typeof stdin.setRawMode === 'function';
  const size = (): { rows: number; cols: number } => ({ rows: stdout.rows ?? 24, cols: stdout.columns ?? 80 });
  const conn = ctx.client().shell(cmd.positionals[0] ?? '', {
    ...size(),
    ...(ctx.env.TERM ? { term: ctx.env.TERM } : {}),
    onOutput: (chunk) => {
      (chunk.stream === 'stderr' ? ctx.io.stderr : stdout).write(chunk.data);
    },
  });
  const onData = (data: Buffer | string): void => conn.write(typeof data === 'string' ? Buffer.from(data) : data);
  // Piped input: forward it, then a ^D so the shell sees end of input like at a terminal.
  const onEnd = (): void => conn.write(Buffer.from([4]));
  const onResize = (): void => {
    const { rows, cols } = size();
    conn.resize(rows, cols);
  };
  // In raw mode Ctrl-C reaches the remote shell as a key; without a TTY it ends the session.
  const onInterrupt = (): void => conn.close();
  ctx.interrupted.addEventListener('abort', onInterrupt, { once: true });
  if (tty) stdin.setRawMode?.(true);
  stdin.on('data', onData);
  stdin.on('end', onEnd);
  stdout.on('resize', onResize);
  try {
    return exitStatusOf(await conn.done);
  } catch (err) {
    if (ctx.interrupted.aborted) return 130;
    throw lostDuring(err, `the shell is ended with the controller; open a new one once berth serve runs again: berth ${dataDirArgs(ctx.dataDirFlag)}shell ${cmd.positionals[0] ?? ''}`);
  } finally {
    ctx.interrupted.removeEventListener('abort', onInterrupt);
    stdout.off('resize', onResize);
    stdin.off('data', onData);
    stdin.off('end', onEnd);
    if (tty) stdin.setRawMode?.(false);
    (stdin as NodeJS.ReadableStream & { pause(): void }).pause();
  }
}
