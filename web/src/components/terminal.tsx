/** A terminal into the workspace: xterm.js + fit addon over `BerthClient.shell` (a real PTY). @module */
import type { JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { FitAddon as FitAddonClass } from '@xterm/addon-fit';
import type { Terminal as TerminalClass } from '@xterm/xterm';
import type { BerthClient } from '../../../src/api/index.js';
import { errorMessage } from '../berth.js';

export function TerminalPanel(props: { client: BerthClient; id: string; enabled: boolean }): JSX.Element {
  const [open, setOpen] = useState(false);
  const [generation, setGeneration] = useState(0);
  if (!open) {
    return (
      <div class="terminal-closed">
        <button
          type="button"
          class="button"
          data-testid="terminal-open"
          disabled={!props.enabled}
          onClick={() => {
            setGeneration((g) => g + 1);
            setOpen(true);
          }}
        >
          Open a terminal
        </button>
        <span class="muted small">{props.enabled ? 'A shell in the workspace.' : 'The workspace must be running (resume the session).'}</span>
      </div>
    );
  }
  return <Xterm key={generation} client={props.client} id={props.id} onClose={() => setOpen(false)} />;
}

function Xterm(props: { client: BerthClient; id: string; onClose: () => void }): JSX.Element {
  const host = useRef<HTMLDivElement>(null);
  const [ended, setEnded] = useState<string | null>(null);

  useEffect(() => {
    let cleanup: (() => void) | null = null;
    let cancelled = false;
    // xterm.js is loaded on first use (a separate chunk: the rest of the page stays small).
    void Promise.all([import('@xterm/xterm'), import('@xterm/addon-fit')]).then(
      ([{ Terminal }, { FitAddon }]) => {
        if (cancelled) return;
        cleanup = mount(Terminal, FitAddon);
      },
      (err: unknown) => setEnded(`Could not load the terminal: ${errorMessage(err)}`),
    );
    return () => {
      cancelled = true;
      cleanup?.();
    };
  }, [props.client, props.id]);

  function mount(Terminal: typeof TerminalClass, FitAddon: typeof FitAddonClass): () => void {
    const term = new Terminal({
      cursorBlink: true,
      fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace',
      fontSize: 13,
      scrollback: 5000,
      theme: { background: '#1d2125', foreground: '#e6e6e6' },
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(host.current!);
    fit.fit();
    const encoder = new TextEncoder();
    const conn = props.client.shell(props.id, {
      rows: term.rows,
      cols: term.cols,
      term: 'xterm-256color',
      onOutput: (c) => term.write(c.data),
    });
    const onData = term.onData((d) => conn.write(encoder.encode(d)));
    const onBinary = term.onBinary((d) => conn.write(Uint8Array.from(d, (ch) => ch.charCodeAt(0) & 0xff)));
    const onResize = term.onResize(({ rows, cols }) => conn.resize(rows, cols));
    const refit = (): void => fit.fit();
    window.addEventListener('resize', refit);
    const observer = typeof ResizeObserver === 'undefined' ? null : new ResizeObserver(refit);
    observer?.observe(host.current!);
    term.focus();
    conn.done.then(
      (r) => setEnded(`The shell exited${r.exitCode !== null ? ` with code ${r.exitCode}` : r.signal ? ` (${r.signal})` : ''}.`),
      (err: unknown) => setEnded(`The shell connection ended: ${errorMessage(err)}`),
    );
    return () => {
      window.removeEventListener('resize', refit);
      observer?.disconnect();
      onData.dispose();
      onBinary.dispose();
      onResize.dispose();
      conn.close();
      term.dispose();
    };
  }

  return (
    <div class="terminal-panel">
      <div class="terminal-bar">
        <span class="muted small">{ended ?? 'Shell in the workspace — copy with selection, paste with Ctrl+Shift+V.'}</span>
        <button type="button" class="button ghost small" onClick={props.onClose}>
          {ended ? 'Close' : 'Close terminal'}
        </button>
      </div>
      <div class="xterm-frame">
        <div class="xterm-host" ref={host} data-testid="terminal" />
      </div>
    </div>
  );
}
