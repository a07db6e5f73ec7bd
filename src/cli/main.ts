/**
 * The `berth` CLI entry: parses argv, runs one command, prints one clear line on failure and
 * exits with the documented code. The only place that calls process.exit.
 * @module
 */
import type { BerthClient } from '../api/index.js';
import { parseCommandLine } from './args.js';
import { describeError, ExitCode } from './exit-codes.js';
import { commandHelp, mainHelp } from './help.js';
import { VERSION } from '../shared/version.js';

/** Set on Ctrl-C, so the abort errors it causes end quietly with 130. */
let interruptedByUser = false;
/** --data-dir as given, for hints that suggest a command line. */
let dataDirFlag: string | undefined;
/** The remote controller the command talks to (null: the local data dir's), for error hints. */
let remote: { server: string; context: string | null } | null = null;

/** The client factory of a command marked `offline` in the registry: asking it for a client is a bug. */
function offlineConnect(command: string): () => never {
  return () => {
    throw new Error(`berth ${command} is marked offline in src/cli/registry.ts but asked for the API client; remove the mark`);
  };
}

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
      // Loaded here, not at the top: `berth --help` needs neither the data dir nor the API client.
      const { createContext } = await import('./context.js');
      // serve is the local controller: it never reads the contexts of berth login.
      let connect: (dataDir: string) => BerthClient | null = offlineConnect(invocation.command.name);
      if (!invocation.command.offline && invocation.command.name !== 'serve') {
        const connector = await (await import('./remote.js')).connectorFor(invocation.globals, process.env);
        ({ connect, remote } = connector);
      }
      const ctx = createContext(invocation.globals, { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin }, process.env, interrupted.signal, connect);
      const run = await invocation.command.load();
      const code = await run(ctx, invocation.parsed);
      return interrupted.signal.aborted && code === ExitCode.ok ? 130 : code;
    }
  }
}

function flush(stream: NodeJS.WriteStream): Promise<void> {
  return new Promise((resolve) => (stream.writableNeedDrain ? stream.once('drain', resolve) : resolve()));
}

// `berth logs ID | head -1`: the reader has gone. That ends berth quietly with 0, as it ends
// `cat`, instead of with a `write EPIPE` stack (an exec'd command is stopped as for Ctrl-C).
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(ExitCode.ok);
    throw err;
  });
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
    const report = describeError(err, { dataDirFlag, remote: remote ?? undefined });
    process.stderr.write(`berth: ${report.message}\n${report.hint ? `  hint: ${report.hint}\n` : ''}`);
    if (process.env.BERTH_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
    await flush(process.stderr);
    process.exit(report.code);
  },
);
