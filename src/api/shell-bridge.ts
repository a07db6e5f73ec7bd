/**
 * An interactive shell in a workspace built only from `SessionService.exec` (agentctl has no PTY
 * and no streaming-stdin API through the service):
 *  - one long-running exec runs `script` (util-linux) so the shell gets a real PTY; its stdin is a
 *    FIFO in the workspace's temp dir, held open read-write so it never sees EOF;
 *  - keystrokes are delivered by short execs that `cat` into the FIFO, serialized and batched
 *    while one is in flight (so latency is one exec round trip, and order is kept);
 *  - resizes run `stty -F <pty> rows R cols C` in another exec; the kernel then sends SIGWINCH
 *    to the shell's foreground job, as with a local terminal.
 * Limitations: each input batch costs one exec, so fast typing over a slow link is coalesced;
 * the workspace needs `script`, `mkfifo` and `stty` (Debian/Ubuntu images have them).
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { OutputChunkView, SessionService } from '../controller/service.js';

/** The wrapper script. $1: state dir, $2/$3: rows/cols. Exit 125 when the workspace lacks the tools. */
const WRAPPER = [
  'd="$1"',
  'command -v script >/dev/null 2>&1 || { echo "berth shell: the workspace has no \'script\' (util-linux)" >&2; exit 125; }',
  'mkdir -p "$d" && mkfifo "$d/in" || exit 125',
  'trap \'rm -rf "$d"\' EXIT',
  'trap \'kill "$p" 2>/dev/null\' TERM HUP INT',
  'echo "$$" > "$d/pid"',
  'exec 3<>"$d/in"',
  'export BERTH_SHELL_DIR="$d" BERTH_ROWS="$2" BERTH_COLS="$3"',
  // Inside the PTY: record its name (for resizes), apply the initial size, become the shell.
  'script -qfec \'tty > "$BERTH_SHELL_DIR/tty.tmp" && mv "$BERTH_SHELL_DIR/tty.tmp" "$BERTH_SHELL_DIR/tty"; stty rows "$BERTH_ROWS" cols "$BERTH_COLS" 2>/dev/null; unset BERTH_SHELL_DIR BERTH_ROWS BERTH_COLS; exec "${SHELL:-/bin/sh}" -i\' /dev/null <&3 &',
  'p=$!',
  'wait "$p"; s=$?',
  // `wait` returns early when a trapped signal arrives; wait again for the real status.
  'kill -0 "$p" 2>/dev/null && { wait "$p"; s=$?; }',
  'exit "$s"',
].join('\n');

const WAIT_READY = 'i=0; while [ ! -e "$1/tty" ]; do i=$((i+1)); [ "$i" -gt 200 ] && exit 1; sleep 0.05; done';
const WRITE_INPUT = 'cat > "$1/in"';
const KILL = 'p=$(cat "$1/pid" 2>/dev/null) && kill -HUP "$p" 2>/dev/null; true';
const RESIZE = 'stty -F "$(cat "$1/tty")" rows "$2" cols "$3"';

export interface ShellOptions {
  rows: number;
  cols: number;
  term?: string;
  onOutput: (chunk: OutputChunkView) => void;
}

export interface ShellSession {
  write(data: Uint8Array): void;
  resize(rows: number, cols: number): void;
  /** Ends the shell (kills `script`); `done` settles afterwards. */
  kill(): void;
  readonly done: Promise<{ exitCode: number | null; signal: string | null }>;
}

/** Starts a shell in session `id`; resolves once the PTY exists (rejects when it could not start). */
export async function openShell(service: SessionService, id: string, opts: ShellOptions): Promise<ShellSession> {
  const dir = `/tmp/berth-shell-${randomBytes(8).toString('hex')}`;
  const abort = new AbortController();
  const env: Record<string, string> = { TERM: opts.term ?? 'xterm-256color' };
  const done = service.exec(id, ['sh', '-c', WRAPPER, 'berth-shell', dir, String(opts.rows), String(opts.cols)], {
    env,
    onOutput: opts.onOutput,
    signal: abort.signal,
  });
  // Surface an early failure (bad state, missing tools) instead of waiting for the PTY forever.
  const early = done.then((r) => {
    throw new Error(`shell exited before it started (exit code ${r.exitCode ?? r.signal ?? 'unknown'})`);
  });
  early.catch(() => undefined);
  const ready = await Promise.race([service.exec(id, ['sh', '-c', WAIT_READY, 'berth-shell-wait', dir]), early]);
  if (ready.exitCode !== 0) {
    abort.abort();
    throw new Error('shell did not start: the PTY did not appear within 10s');
  }

  // One queue for input and resizes, run one exec at a time: order is kept (a resize lands
  // before the keys typed after it) and keys typed while an exec is in flight are coalesced.
  type Op = { kind: 'input'; data: Buffer } | { kind: 'resize'; rows: number; cols: number };
  const queue: Op[] = [];
  let flushing = false;
  let closed = false;
  const runOp = async (op: Op): Promise<void> => {
    if (op.kind === 'input') {
      await service.exec(id, ['sh', '-c', WRITE_INPUT, 'berth-shell-in', dir], { stdin: op.data });
    } else {
      await service.exec(id, ['sh', '-c', RESIZE, 'berth-shell-resize', dir, String(op.rows), String(op.cols)]);
    }
  };
  const flush = async (): Promise<void> => {
    if (flushing) return;
    flushing = true;
    try {
      while (queue.length > 0 && !closed) {
        let op = queue.shift()!;
        if (op.kind === 'input') {
          const parts = [op.data];
          while (queue[0]?.kind === 'input') parts.push((queue.shift() as { data: Buffer }).data);
          op = { kind: 'input', data: Buffer.concat(parts) };
        }
        await runOp(op).catch(() => undefined); // the shell is gone or the session stopped: `done` says how
      }
    } finally {
      flushing = false;
    }
  };
  const settled = done.finally(() => {
    closed = true;
  });
  return {
    write(data) {
      if (closed) return;
      queue.push({ kind: 'input', data: Buffer.from(data) });
      void flush();
    },
    resize(rows, cols) {
      if (closed) return;
      queue.push({ kind: 'resize', rows, cols });
      void flush();
    },
    kill() {
      if (closed) return;
      closed = true;
      // Signal the wrapper inside the workspace (it kills `script`, whose PTY hangup ends the shell);
      // aborting the exec alone may only detach from the process.
      void service
        .exec(id, ['sh', '-c', KILL, 'berth-shell-kill', dir])
        .catch(() => undefined)
        .finally(() => abort.abort());
    },
    done: settled,
  };
}
