/**
 * The `berth` CLI entry: parses argv, runs one command, prints one clear line on failure and
 * exits with the documented code. The only place that calls process.exit.
 * @module
 */
import { parseCommandLine } from './args.js';
import { createContext } from './context.js';
import { describeError, ExitCode } from './exit-codes.js';
import { commandHelp, mainHelp } from './help.js';
import { VERSION } from '../shared/version.js';

/** Set on Ctrl-C, so the abort errors it causes end quietly with 130. */
let interruptedByUser = false;
/** --data-dir as given, for hints that suggest a command line. */
let dataDirFlag: string | undefined;

async function main(argv: readonly string[]): Promise<number> {
  const invocation = parseCommandLine(argv);
  switch (invocation.kind) {
    case 'help':
      process.stdout.write(invocation.command ? commandHelp(invocation.command) : mainHelp(VERSION));
      return ExitCode.ok;
    case 'version':
      process.stdout.write(`berth ${VERSION}\n`);
      return ExitCode.ok;
    case 'run': {
      dataDirFlag = invocation.globals.dataDir;
      const interrupted = new AbortController();
      interrupted.signal.addEventListener('abort', () => (interruptedByUser = true));
      // serve installs its own handlers for a graceful shutdown; other long-running commands
      // (logs -f, launch, exec) end cleanly on the first Ctrl-C.
      if (invocation.command.name !== 'serve') process.once('SIGINT', () => interrupted.abort());
      const ctx = createContext(invocation.globals, { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }, process.env, interrupted.signal);
      const run = await invocation.command.load();
      const code = await run(ctx, invocation.parsed);
      return interrupted.signal.aborted && code === ExitCode.ok ? 130 : code;
    }
  }
}

function flush(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => (stream.writableNeedDrain ? stream.once('drain', resolve) : resolve()));
}

main(process.argv.slice(2)).then(
  async (code) => {
    await Promise.all([flush(process.stdout), flush(process.stderr)]);
    process.exit(code);
  },
  async (err: unknown) => {
    if (interruptedByUser && (err as Error | undefined)?.name === 'AbortError') {
      process.exit(130);
    }
    const report = describeError(err, { dataDirFlag });
    process.stderr.write(`berth: ${report.message}\n${report.hint ? `  hint: ${report.hint}\n` : ''}`);
    if (process.env.BERTH_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    await flush(process.stderr);
    process.exit(report.code);
  },
);
