/**
 * Interactive shells in a workspace: the PTY wrapper command, the resize command, and `PtyShell`,
 * which turns one attached workspace process (output out, stdin in) into a ShellSession.
 *
 * How the PTY is made: agentctl runs processes on pipes, so the process is
 * `sh -c WRAPPER`, which runs util-linux `script -qfec INNER /dev/null`: `script` opens a real
 * PTY, copies its stdin (our streamed stdin) to the PTY and the PTY's output to its stdout.
 * INNER runs *inside* the PTY: it records the PTY's name (`tty`) in a private state dir, applies
 * the initial size and execs the user's shell (or the requested argv).
 *
 * Resizes: `stty -F <pty> rows R cols C` in a separate short exec; the kernel then sends SIGWINCH
 * to the PTY's foreground job, as with a local terminal. Input written while a resize is in
 * flight is held back until it lands, so "resize, then type" reaches the shell in that order.
 *
 * Ending: SIGKILL to the wrapper's process group. `script` (util-linux 2.38) blocks SIGHUP and
 * turns SIGTERM into a SIGTERM for the shell, which an interactive shell ignores, so only SIGKILL
 * ends it; its PTY master then closes and the kernel hangs up the shell's session (the shell and
 * its jobs get SIGHUP, as when a terminal window closes). `script` stays in the foreground of the
 * wrapper on purpose: as a background job of a non-interactive sh it would inherit SIGINT ignored,
 * and Ctrl-C would not interrupt programs in the shell.
 * A killed wrapper cannot remove its state dir (`/tmp/berth-shell-*`, mode 0700, two small files);
 * the dir records the wrapper's pid, and the next shell opened on that machine removes the dirs
 * whose wrapper is gone. A shell that exits by itself removes its own.
 *
 * Ownership: a shell's agentctl process id is `shell-<controller run id>-<random>` and its argv
 * carries the `berth-shell` marker. A shell outlives a controller that died (SIGKILL, crash): its
 * websocket is gone, nobody can reach it again, so the next controller kills every running shell
 * of an earlier run when it reconnects the session (`staleShells`).
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { OutputChunkView, ShellSession } from './service.js';

/** Exit status of a shell. */
interface ShellExit {
  exitCode: number | null;
  signal: string | null;
}

export type ShellPortMessage = { type: 'output'; chunk: OutputChunkView } | ({ type: 'exit' } & ShellExit);

/** What PtyShell needs from the process running the wrapper (the manager's agentctl attachment, or a local child in tests). */
export interface ShellPort {
  /** The process's output, ending with its exit (an iteration that ends without `exit` means the connection was lost). */
  readonly messages: AsyncIterable<ShellPortMessage>;
  write(data: Uint8Array): void;
  signal(signal: 'SIGKILL'): void;
  /** Resizes the PTY; resolves once the new size is set (or could not be). */
  resize(rows: number, cols: number): Promise<void>;
}

/** The wrapper. $1: state dir, $2/$3: rows/cols, $4: the command INNER execs. Exit 125 when the workspace lacks the tools. */
const WRAPPER = [
  'd="$1"',
  'command -v script >/dev/null 2>&1 || { echo "berth shell: the workspace has no \'script\' (util-linux)" >&2; exit 125; }',
  // State dirs of earlier wrappers that were SIGKILLed (their EXIT trap never ran): ours, with a dead pid.
  'for o in "${d%/*}"/berth-shell-*; do [ -O "$o" ] && p=$(cat "$o/pid" 2>/dev/null) && [ -n "$p" ] && ! kill -0 "$p" 2>/dev/null && rm -rf "$o"; done',
  '(umask 077 && mkdir "$d") || { echo "berth shell: cannot create $d" >&2; exit 125; }',
  'trap \'rm -rf "$d"\' EXIT',
  'echo $$ > "$d/pid.tmp" && mv "$d/pid.tmp" "$d/pid"',
  // Trapped, so the wrapper outlives `script` and removes the state dir when a signal ends the shell.
  "trap 'exit 129' HUP",
  "trap 'exit 143' TERM",
  'export BERTH_SHELL_DIR="$d" BERTH_ROWS="$2" BERTH_COLS="$3" BERTH_USER_SHELL="${SHELL:-/bin/sh}"',
  // script runs its -c command with $SHELL; /bin/sh keeps INNER's syntax independent of the user's shell.
  'SHELL=/bin/sh script -qfec "$4" /dev/null',
].join('\n');

/** Runs inside the PTY before the command: record the PTY (atomically, for resizes), set the size, restore SHELL. */
const INNER_PRELUDE = [
  'tty > "$BERTH_SHELL_DIR/tty.tmp" && mv "$BERTH_SHELL_DIR/tty.tmp" "$BERTH_SHELL_DIR/tty"',
  'stty rows "$BERTH_ROWS" cols "$BERTH_COLS" 2>/dev/null',
  'SHELL="$BERTH_USER_SHELL"; export SHELL',
  'unset BERTH_SHELL_DIR BERTH_ROWS BERTH_COLS BERTH_USER_SHELL',
].join('; ');

const DEFAULT_COMMAND = 'exec "$SHELL" -i';

/** Waits (bounded: 10s) for the PTY name, then sets the size. $1: state dir, $2/$3: rows/cols. */
const RESIZE = [
  'i=0',
  'while [ ! -s "$1/tty" ]; do i=$((i+1)); [ "$i" -gt 200 ] && exit 1; sleep 0.05; done',
  'stty -F "$(cat "$1/tty")" rows "$2" cols "$3"',
].join('; ');

/** End of input at a terminal: ^D (VEOF) through the PTY's line discipline. */
const EOT = new Uint8Array([4]);

/** A fresh private state dir for one shell (inside the workspace's machine or Pod). */
export function newShellDir(): string {
  return `/tmp/berth-shell-${randomBytes(8).toString('hex')}`;
}

/** Prefix of the agentctl process ids of shells. */
const SHELL_PROCESS_PREFIX = 'shell-';
/** argv[3] of every shell wrapper (`$0` of `sh -c`): marks a process as a berth shell. */
const SHELL_MARKER = 'berth-shell';

/** A fresh agentctl process id for a shell opened by the controller run `runId`. */
export function shellProcessId(runId: string): string {
  return `${SHELL_PROCESS_PREFIX}${runId}-${randomBytes(6).toString('hex')}`;
}

/** A fresh id for one controller run (distinguishes its shells from those of earlier runs). */
export function newControllerRunId(): string {
  return randomBytes(6).toString('hex');
}

/** Whether an agentctl process is a berth shell wrapper (by its argv marker). */
function isShellProcess(p: { command: readonly string[] }): boolean {
  return p.command[0] === 'sh' && p.command[1] === '-c' && p.command[3] === SHELL_MARKER;
}

/**
 * The running shells not opened by the controller run `runId` (orphans of an earlier controller,
 * including shells from before process ids carried the run id).
 */
export function staleShells<P extends { id: string; status: string; command: readonly string[] }>(processes: readonly P[], runId: string): P[] {
  const mine = `${SHELL_PROCESS_PREFIX}${runId}-`;
  return processes.filter((p) => p.status === 'running' && isShellProcess(p) && !p.id.startsWith(mine));
}

/** Quotes one word for a POSIX shell. */
function shellQuote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/** argv of the process that runs `argv` (default: the user's interactive shell) under a PTY of `rows`×`cols`. */
export function shellCommand(dir: string, rows: number, cols: number, argv?: readonly string[]): string[] {
  const command = argv && argv.length > 0 ? `exec ${argv.map(shellQuote).join(' ')}` : DEFAULT_COMMAND;
  return ['sh', '-c', WRAPPER, SHELL_MARKER, dir, String(rows), String(cols), `${INNER_PRELUDE}; ${command}`];
}

/** argv of the short process that resizes the PTY of the shell in `dir`. */
export function resizeCommand(dir: string, rows: number, cols: number): string[] {
  return ['sh', '-c', RESIZE, 'berth-shell-resize', dir, String(rows), String(cols)];
}

/** A ShellSession over a ShellPort. Iterate `output` to drive it: `exit` settles as the iteration ends. */
export class PtyShell implements ShellSession {
  readonly output: AsyncIterable<OutputChunkView>;
  readonly exit: Promise<ShellExit>;
  readonly #port: ShellPort;
  #closed = false;
  #exited = false;
  /** Input written while a resize is in flight, sent once it lands. */
  #held: Uint8Array[] = [];
  #resizing = false;
  #nextSize: { rows: number; cols: number } | null = null;

  constructor(port: ShellPort) {
    this.#port = port;
    let settle!: { resolve: (e: ShellExit) => void; reject: (err: unknown) => void };
    this.exit = new Promise<ShellExit>((resolve, reject) => (settle = { resolve, reject }));
    this.exit.catch(() => undefined); // also surfaced by the output iteration
    this.output = this.#drive(settle);
  }

  write(data: Uint8Array | string): void {
    if (this.#closed || this.#exited) return;
    const bytes = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    if (bytes.length === 0) return;
    if (this.#resizing) this.#held.push(bytes);
    else this.#port.write(bytes);
  }

  end(): void {
    this.write(EOT);
  }

  resize(rows: number, cols: number): void {
    if (this.#closed || this.#exited) return;
    this.#nextSize = { rows, cols };
    if (!this.#resizing) void this.#runResizes();
  }

  close(): void {
    if (this.#closed || this.#exited) return;
    this.#closed = true;
    this.#held = [];
    this.#port.signal('SIGKILL');
  }

  async #runResizes(): Promise<void> {
    this.#resizing = true;
    try {
      // Only the latest size matters: sizes asked for while one is being set are coalesced.
      for (let size = this.#nextSize; size !== null && !this.#closed && !this.#exited; size = this.#nextSize) {
        this.#nextSize = null;
        await this.#port.resize(size.rows, size.cols).catch(() => undefined);
      }
    } finally {
      this.#resizing = false;
      const held = this.#held.splice(0);
      if (!this.#closed && !this.#exited) for (const bytes of held) this.#port.write(bytes);
    }
  }

  async *#drive(settle: { resolve: (e: ShellExit) => void; reject: (err: unknown) => void }): AsyncGenerator<OutputChunkView, void, undefined> {
    let ended = false;
    try {
      for await (const message of this.#port.messages) {
        if (message.type === 'output') {
          yield message.chunk;
          continue;
        }
        ended = true;
        this.#finish();
        settle.resolve({ exitCode: message.exitCode, signal: message.signal });
        return;
      }
      ended = true;
      this.#finish();
      settle.reject(new Error('the shell ended without an exit status (the session stopped or its connection was lost)'));
    } catch (err) {
      ended = true;
      this.#finish();
      settle.reject(err);
      throw err;
    } finally {
      // The consumer stopped reading early: end the shell rather than leave it running unseen.
      if (!ended) {
        this.close();
        settle.reject(new Error('the shell output was abandoned before the shell exited'));
      }
    }
  }

  #finish(): void {
    this.#exited = true;
    this.#held = [];
  }
}
