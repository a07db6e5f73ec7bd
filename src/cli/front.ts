/**
 * The `berth` front door (dist/berth-front.cjs, loaded by bin/berth.js): answers the commands that
 * need nothing but the command table — help, `--version`, `berth version` — as CommonJS, so they
 * skip Node's ES module loader (about a third of a bare Node start here), and hands every other
 * command line, including a malformed one, to the full CLI (dist/berth.js), which reports errors.
 * @module
 */
import { parseCommandLine, type Invocation } from './args.js';
import { commandHelp, mainHelp } from './help.js';
import { VERSION } from '../shared/version.js';
import { versionLine } from './version-line.js';

/** What the front door prints for `argv`, or null when the full CLI must run it. */
export function frontOutput(argv: readonly string[]): string | null {
  let invocation: Invocation;
  try {
    invocation = parseCommandLine(argv);
  } catch {
    return null; // a usage error: the full CLI explains it, with its exit code
  }
  switch (invocation.kind) {
    case 'help':
      return invocation.command ? commandHelp(invocation.command) : mainHelp(VERSION);
    case 'version':
      return `berth ${VERSION}\n`;
    case 'run':
      // -o json|yaml goes through the CLI's formatter
      return invocation.command.name === 'version' && (invocation.globals.output ?? 'table') === 'table' ? versionLine() : null;
  }
}

/** Prints the answer for `argv` and returns true, or returns false (nothing printed). */
export function runFront(argv: readonly string[]): boolean {
  const text = frontOutput(argv);
  if (text === null) return false;
  // `berth --help | head -1`: a reader that has gone ends berth quietly, as in the full CLI
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') process.exit(0);
    throw err;
  });
  process.stdout.write(text);
  return true;
}
