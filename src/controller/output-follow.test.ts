import { afterEach, describe, expect, it, vi } from 'vitest';
import type { RecordedOutputInput } from '../inventory/index.js';
import type { OutputChunk, OutputPage } from '../protocol/index.js';
import { OutputFollower } from './output-follow.js';

/** A fake agentctl: processes' output that grows as the test says, paged as agentctl pages it. */
function fakeAgentctl() {
  const runs = new Map<string, { chunks: OutputChunk[]; exited: boolean }>();
  const reads: { id: string; from: number }[] = [];
  let failWith: Error | null = null;
  const runOf = (id: string) => {
    let run = runs.get(id);
    if (!run) runs.set(id, (run = { chunks: [], exited: false }));
    return run;
  };
  const client = {
    readOutput: async (id: string, opts: { from?: number; limit?: number } = {}): Promise<OutputPage> => {
      reads.push({ id, from: opts.from ?? 0 });
      if (failWith) throw failWith;
      const run = runOf(id);
      const from = opts.from ?? 0;
      const page = run.chunks.filter((c) => c.seq >= from).slice(0, opts.limit ?? 1000);
      const next = page.length ? page[page.length - 1]!.seq + 1 : Math.min(from, run.chunks.length);
      return { chunks: page, next, first_available: 0, complete: run.exited && next >= run.chunks.length };
    },
  };
  return {
    client,
    reads,
    print(id: string, ...texts: string[]) {
      const run = runOf(id);
      for (const t of texts) run.chunks.push({ seq: run.chunks.length, stream: 'stdout', data: Buffer.from(t).toString('base64'), at: '2026-01-01T00:00:00.000Z' });
    },
    exit(id: string) {
      runOf(id).exited = true;
    },
    fail(err: Error | null) {
      failWith = err;
    },
  };
}

/** A fake store that records each write (the run and its text). */
function fakeStore() {
  const writes: { processId: string; text: string }[] = [];
  let failWith: Error | null = null;
  let hold: Promise<void> | null = null;
  return {
    writes,
    store: {
      putRecordedOutput: async (_session: string, processId: string, chunks: readonly RecordedOutputInput[]): Promise<boolean> => {
        if (hold) await hold;
        if (failWith) throw failWith;
        writes.push({ processId, text: chunks.map((c) => Buffer.from(c.data as Uint8Array).toString()).join('') });
        return true;
      },
    },
    fail(err: Error | null) {
      failWith = err;
    },
    holdWrites(p: Promise<void> | null) {
      hold = p;
    },
  };
}

function setup(opts: { maxBytes?: number; wanted?: boolean; realClock?: boolean; after?: Promise<void> } = {}) {
  const agentctl = fakeAgentctl();
  const store = fakeStore();
  const warnings: { obj: object; msg: string | undefined }[] = [];
  const log = { debug: () => undefined, info: () => undefined, error: () => undefined, warn: (obj: object, msg?: string) => warnings.push({ obj, msg }) };
  const abort = new AbortController();
  const state = { processId: 'agent-1' as string | null, now: 0 };
  const follower = new OutputFollower(
    {
      sessionId: 's-1',
      client: agentctl.client,
      store: store.store,
      log,
      processId: () => state.processId,
      signal: abort.signal,
      ...(opts.wanted !== undefined ? { wanted: async () => opts.wanted! } : {}),
      ...(opts.after ? { after: opts.after } : {}),
    },
    { pollMs: 2_000, flushMs: 5_000, maxBytes: opts.maxBytes ?? 1024, now: opts.realClock ? () => Date.now() : () => state.now },
  );
  return { agentctl, store, warnings, abort, state, follower };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('OutputFollower', () => {
  it('reads on from the last sequence read and writes at most once per flush interval, only when there is new output', async () => {
    const { agentctl, store, state, follower } = setup();
    agentctl.print('agent-1', 'ready\n');
    await follower.step();
    expect(store.writes).toEqual([{ processId: 'agent-1', text: 'ready\n' }]);
    agentctl.reads.length = 0;
    agentctl.print('agent-1', 'one\n');
    state.now = 2_000;
    await follower.step();
    expect(agentctl.reads, 'from where it left off, not from the start').toEqual([{ id: 'agent-1', from: 1 }]);
    expect(store.writes, 'coalesced: not yet due').toHaveLength(1);
    agentctl.print('agent-1', 'two\n');
    state.now = 5_000;
    await follower.step();
    expect(store.writes.at(-1)).toEqual({ processId: 'agent-1', text: 'ready\none\ntwo\n' });
    state.now = 20_000;
    await follower.step();
    expect(store.writes, 'nothing new: no write').toHaveLength(2);
  });

  it('keeps the run’s last maxBytes in memory and in each write', async () => {
    const { agentctl, store, state, follower } = setup({ maxBytes: 10 });
    let all = '';
    for (let i = 0; i < 50; i++) {
      agentctl.print('agent-1', `line ${i}\n`);
      all += `line ${i}\n`;
    }
    await follower.step();
    state.now = 10_000;
    agentctl.print('agent-1', 'last\n');
    await follower.step();
    expect(store.writes.map((w) => w.text)).toEqual([all.slice(-10), `${all}last\n`.slice(-10)]);
  });

  it('a new agent run starts a new record after the run before got its last output', async () => {
    const { agentctl, store, state, follower } = setup();
    agentctl.print('agent-1', 'first run\n');
    await follower.step();
    agentctl.print('agent-1', 'its last words\n');
    state.now = 1_000;
    await follower.step(); // read, not yet written
    state.processId = 'agent-2';
    agentctl.print('agent-2', 'second run\n');
    await follower.step();
    expect(store.writes.map((w) => w.processId)).toEqual(['agent-1', 'agent-1']);
    expect(store.writes[1]?.text).toBe('first run\nits last words\n');
    state.now = 10_000;
    await follower.step();
    expect(store.writes.at(-1)).toEqual({ processId: 'agent-2', text: 'second run\n' });
  });

  it('writes at once when the run has exited, then reads it no more', async () => {
    const { agentctl, store, follower } = setup();
    agentctl.print('agent-1', 'a\n');
    await follower.step();
    agentctl.print('agent-1', 'bye\n');
    agentctl.exit('agent-1');
    await follower.step();
    expect(store.writes.at(-1)?.text, 'its end is written without waiting for the interval').toBe('a\nbye\n');
    agentctl.reads.length = 0;
    await follower.step();
    expect(agentctl.reads).toEqual([]);
  });

  it('logs a failure once per kind, retries at the next poll, and loses nothing', async () => {
    const { agentctl, store, warnings, state, follower } = setup();
    agentctl.print('agent-1', 'a\n');
    agentctl.fail(new Error('connect ECONNREFUSED 127.0.0.1:4000 token=sekret123'));
    await follower.step();
    await follower.step();
    expect(warnings).toHaveLength(1);
    expect(JSON.stringify(warnings[0])).toMatch(/cannot read the agent output/);
    expect(JSON.stringify(warnings[0]), 'sanitized').not.toContain('sekret123');
    agentctl.fail(null);
    store.fail(new Error('database is locked'));
    await follower.step();
    state.now = 10_000;
    await follower.step();
    expect(warnings, 'the write failure once').toHaveLength(2);
    expect(store.writes).toEqual([]);
    store.fail(null);
    state.now = 20_000;
    await follower.step();
    expect(store.writes).toEqual([{ processId: 'agent-1', text: 'a\n' }]);
  });

  it('no agent yet, or an executor that reads a stopped session itself: nothing is read or written', async () => {
    const a = setup();
    a.state.processId = null;
    await a.follower.step();
    expect(a.agentctl.reads).toEqual([]);
    const b = setup({ wanted: false });
    b.agentctl.print('agent-1', 'x\n');
    await b.follower.step();
    expect(b.agentctl.reads).toEqual([]);
    expect(b.store.writes).toEqual([]);
  });

  it('polls on its interval; its abort leaves no timer, and settles after a write in flight', async () => {
    vi.useFakeTimers();
    const { agentctl, store, abort, follower } = setup({ realClock: true });
    agentctl.print('agent-1', 'a\n');
    follower.start();
    expect(vi.getTimerCount()).toBe(1);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(store.writes).toHaveLength(1);
    expect(vi.getTimerCount(), 'the next poll').toBe(1);

    let release = () => undefined as void;
    store.holdWrites(new Promise<void>((r) => (release = r)));
    agentctl.print('agent-1', 'b\n');
    await vi.advanceTimersByTimeAsync(6_000); // polls until a write is due and held
    let settled = false;
    void follower.settled().then(() => (settled = true));
    abort.abort(new Error('closed'));
    await vi.advanceTimersByTimeAsync(0);
    expect(settled, 'a write in flight is waited for').toBe(false);
    release();
    await vi.advanceTimersByTimeAsync(0);
    expect(settled).toBe(true);
    expect(vi.getTimerCount(), 'no timer left').toBe(0);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(store.writes, 'the write in flight landed; nothing after the abort').toHaveLength(2);
  });

  it('the follower of a new live entry writes only after the one before it settled (its last write lands first)', async () => {
    let previousDone = () => undefined as void;
    const { agentctl, store, follower } = setup({ after: new Promise<void>((r) => (previousDone = r)) });
    agentctl.print('agent-1', 'a\n');
    const step = follower.step();
    await new Promise((r) => setImmediate(r));
    expect(store.writes).toEqual([]);
    previousDone();
    await step;
    expect(store.writes).toEqual([{ processId: 'agent-1', text: 'a\n' }]);
  });

  it('an aborted follower neither reads nor writes, and settles at once', async () => {
    const { agentctl, store, abort, follower } = setup();
    abort.abort(new Error('closed'));
    follower.start();
    await follower.settled();
    agentctl.print('agent-1', 'a\n');
    await follower.step();
    expect(agentctl.reads).toEqual([]);
    expect(store.writes).toEqual([]);
  });
});
