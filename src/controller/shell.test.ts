import { describe, expect, it } from 'vitest';
import { PtyShell, resizeCommand, shellCommand, shellProcessId, staleShells, type ShellPort, type ShellPortMessage } from './shell.js';

/** A recording port whose messages the test pushes and whose resizes the test completes. */
function fakePort() {
  const events: string[] = [];
  const items: ShellPortMessage[] = [];
  let wake: (() => void) | undefined;
  let ended = false;
  const resizes: (() => void)[] = [];
  const port: ShellPort = {
    messages: {
      async *[Symbol.asyncIterator]() {
        for (;;) {
          const item = items.shift();
          if (item) {
            yield item;
            continue;
          }
          if (ended) return;
          await new Promise<void>((r) => (wake = r));
        }
      },
    },
    write: (data) => events.push(`write:${new TextDecoder().decode(data)}`),
    signal: (signal) => events.push(`signal:${signal}`),
    resize: (rows, cols) => {
      events.push(`resize:${rows}x${cols}`);
      return new Promise<void>((r) => resizes.push(r));
    },
  };
  const push = (m: ShellPortMessage): void => {
    items.push(m);
    wake?.();
  };
  return {
    port,
    events,
    push,
    end: () => {
      ended = true;
      wake?.();
    },
    finishResize: async () => {
      resizes.shift()?.();
      await new Promise((r) => setTimeout(r, 0));
    },
  };
}

const out = (text: string): ShellPortMessage => ({ type: 'output', chunk: { seq: 0, stream: 'stdout', data: new TextEncoder().encode(text) } });

describe('PtyShell', () => {
  it('holds input typed after a resize until the resize lands, coalescing sizes asked for meanwhile', async () => {
    const f = fakePort();
    const shell = new PtyShell(f.port);
    shell.write('a');
    shell.resize(30, 100);
    shell.write('b');
    shell.resize(31, 101);
    shell.resize(40, 120);
    shell.write('c');
    expect(f.events).toEqual(['write:a', 'resize:30x100']);
    await f.finishResize();
    expect(f.events.at(-1), 'only the latest pending size is set').toBe('resize:40x120');
    await f.finishResize();
    expect(f.events).toEqual(['write:a', 'resize:30x100', 'resize:40x120', 'write:b', 'write:c']);
    shell.write('d');
    expect(f.events.at(-1)).toBe('write:d');
  });

  it('yields output, then settles exit from the exit message; end() sends ^D', async () => {
    const f = fakePort();
    const shell = new PtyShell(f.port);
    shell.end();
    expect(f.events).toEqual(['write:\u0004']);
    f.push(out('hi'));
    f.push({ type: 'exit', exitCode: 4, signal: null });
    const text: string[] = [];
    for await (const c of shell.output) text.push(new TextDecoder().decode(c.data));
    expect(text).toEqual(['hi']);
    await expect(shell.exit).resolves.toEqual({ exitCode: 4, signal: null });
    shell.write('late');
    expect(f.events, 'input after the exit is dropped').toEqual(['write:\u0004']);
  });

  it('rejects exit when the output ends without an exit status (connection lost, session stopped)', async () => {
    const f = fakePort();
    const shell = new PtyShell(f.port);
    f.end();
    for await (const _ of shell.output) void _;
    await expect(shell.exit).rejects.toThrow(/without an exit status/);
  });

  it('kills the wrapper on close() (the PTY then hangs up the shell) and drops later input', () => {
    const f = fakePort();
    const shell = new PtyShell(f.port);
    shell.close();
    shell.close();
    shell.write('ignored');
    expect(f.events).toEqual(['signal:SIGKILL']);
  });

  it('ends the shell when the consumer stops reading its output early', async () => {
    const f = fakePort();
    const shell = new PtyShell(f.port);
    f.push(out('x'));
    for await (const _ of shell.output) break;
    expect(f.events).toContain('signal:SIGKILL');
    await expect(shell.exit).rejects.toThrow(/abandoned/);
  });
});

describe('shellCommand', () => {
  it('quotes a requested argv for the shell inside the PTY and keeps the state dir and size as arguments', () => {
    const argv = shellCommand('/tmp/berth-shell-x', 24, 80, ['printf', "it's %s", '$HOME']);
    expect(argv.slice(0, 2)).toEqual(['sh', '-c']);
    expect(argv.slice(3, 7)).toEqual(['berth-shell', '/tmp/berth-shell-x', '24', '80']);
    expect(argv[7]).toMatch(/; exec 'printf' 'it'\\''s %s' '\$HOME'$/);
    expect(shellCommand('/d', 1, 1)[7]).toMatch(/; exec "\$SHELL" -i$/);
    expect(resizeCommand('/d', 5, 6).slice(3)).toEqual(['berth-shell-resize', '/d', '5', '6']);
  });
});

describe('staleShells', () => {
  const shell = (id: string, status: 'running' | 'exited' = 'running') => ({ id, status, command: shellCommand('/tmp/berth-shell-x', 24, 80) });

  it('picks the running shells of earlier controller runs, never this run’s, exited ones, the agent or other processes', () => {
    const mine = shellProcessId('run1');
    const earlier = shellProcessId('run0');
    const processes = [
      shell(mine),
      shell(earlier),
      shell(shellProcessId('run0'), 'exited'),
      shell('p-123'), // a shell from before ids carried the run id: still recognised by its argv
      { id: 'agent-1', status: 'running', command: ['node', 'demo-agent.mjs'] },
      { id: 'p-9', status: 'running', command: ['sh', '-c', 'sleep 100'] },
      { id: 'p-10', status: 'running', command: ['sh', '-c', 'x', 'berth-shell-resize', '/tmp/d', '1', '1'] },
    ];
    expect(staleShells(processes, 'run1').map((p) => p.id)).toEqual([earlier, 'p-123']);
  });

  it('makes process ids agentctl accepts', () => {
    expect(shellProcessId('0a1b2c3d4e5f')).toMatch(/^shell-0a1b2c3d4e5f-[0-9a-f]{12}$/);
  });
});
