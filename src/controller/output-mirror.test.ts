import { afterEach, describe, expect, it, vi } from 'vitest';
import { resolveConfig } from '../config/index.js';
import type { OutputChunk, OutputPage } from '../protocol/index.js';
import { SessionManager } from './manager.js';
import { outputTail } from './output-follow-tail.js';
import { SessionStateError } from './service.js';
import { FakeExecutor } from './testing/fake-executor.js';
import { testContext, type TestContext } from './testing/test-context.js';

const config = resolveConfig(
  { executors: { fake: { type: 'local' } }, agents: { worker: { command: ['agent'] } }, defaults: { executor: 'fake', agent: 'worker' } },
  { source: null, installRoot: '/opt/berth' },
);

/** A process's retained output as agentctl pages it: `from` clamped to the first retained chunk, at most `limit` chunks. */
function agentctlOutput(texts: readonly string[], firstAvailable = 0) {
  const chunks: OutputChunk[] = texts.map((t, seq) => ({ seq, stream: seq % 2 ? 'stderr' : 'stdout', data: Buffer.from(t).toString('base64'), at: '2026-01-01T00:00:00.000Z' }));
  const reads: { from: number; limit: number }[] = [];
  const readOutput = async (_id: string, opts: { from?: number; limit?: number } = {}): Promise<OutputPage> => {
    const from = opts.from ?? 0;
    const limit = opts.limit ?? 1000;
    reads.push({ from, limit });
    const page = chunks.filter((c) => c.seq >= Math.max(from, firstAvailable)).slice(0, limit);
    return { chunks: page, next: page.length ? page[page.length - 1]!.seq + 1 : chunks.length, first_available: firstAvailable, complete: false };
  };
  return { readOutput, reads };
}

const text = (chunks: readonly { data: Uint8Array }[]) => chunks.map((c) => new TextDecoder().decode(c.data)).join('');

async function collect(it: AsyncIterable<{ seq: number; data: Uint8Array }>) {
  const out: { seq: number; data: Uint8Array }[] = [];
  for await (const c of it) out.push(c);
  return out;
}

describe('outputTail', () => {
  it('reads pages backwards from the end until it holds maxBytes, not the whole retained output', async () => {
    const texts = Array.from({ length: 2500 }, (_, i) => `line ${i}\n`);
    const fake = agentctlOutput(texts, 100);
    const { chunks: tail, next } = await outputTail(fake, 'agent-1', 15_000, AbortSignal.timeout(5000));
    expect(next, 'where to read on from').toBe(2500);
    expect(tail.map((c) => c.seq)).toEqual(Array.from({ length: 2000 }, (_, i) => 500 + i));
    expect(fake.reads.slice(1), 'two pages back from the end, each ending where the later one began').toEqual([
      { from: 1500, limit: 1000 },
      { from: 500, limit: 1000 },
    ]);
    const { chunks: all } = await outputTail(agentctlOutput(texts, 100), 'agent-1', 1024 * 1024, AbortSignal.timeout(5000));
    expect(all[0]?.seq, 'everything retained, from the first available chunk').toBe(100);
    expect(all).toHaveLength(2400);
    expect(await outputTail(agentctlOutput([]), 'agent-1', 10, AbortSignal.timeout(5000))).toEqual({ chunks: [], next: 0 });
  });
});

describe('logs of a stopped session of an executor that cannot read its output', () => {
  let t: (TestContext & { manager: SessionManager; executor: FakeExecutor }) | null = null;
  afterEach(async () => {
    await t?.manager.close();
    t?.dispose();
    t = null;
  });

  async function readySession(output: { readOutput: ReturnType<typeof agentctlOutput>['readOutput'] }) {
    const executor = new FakeExecutor();
    const c = testContext({ executors: [executor], config, snapshotProfile: () => ({ executor: 'fake', profile: null, type: 'local', settings: {}, env: {} }) });
    t = { ...c, manager: new SessionManager(c.ctx), executor };
    const view = await t.manager.waitUntilSettled((await t.manager.launch({ repository: { url: 'https://git.example/a.git' } })).id);
    expect(view.state).toBe('ready');
    const live = c.ctx.live.get(view.id)!;
    expect(live.agentProcessId).toBe('agent-1');
    Object.assign(live.instance.client, output);
    return { ...t, id: view.id };
  }

  it('answers from the output mirrored at stop (follow ends after it), never from a live instance; rm deletes the mirror', async () => {
    const { manager, store, executor, id } = await readySession(agentctlOutput(['ready for instructions\n', 'you said: hello\n']));
    expect((await manager.stop(id)).state).toBe('stopped');
    expect(executor.ops().filter((op) => op === 'createInstance')).toHaveLength(1);
    expect(text(await collect(manager.logs(id, {})))).toBe('ready for instructions\nyou said: hello\n');
    expect(text(await collect(manager.logs(id, { follow: true }))), 'follow ends after the recorded output').toBe('ready for instructions\nyou said: hello\n');
    expect((await collect(manager.logs(id, { from: 1 }))).map((c) => c.seq)).toEqual([1]);
    await expect(collect(manager.logs(id, { previous: true }))).rejects.toThrow(/no previous agent run: 'agent-1' is its first agent run/);
    expect(executor.ops().filter((op) => op === 'createInstance'), 'reading the logs did not resume it').toHaveLength(1);
    expect((await manager.get(id)).state).toBe('stopped');

    await manager.remove(id);
    expect(await store.readRecordedOutput(id, 'agent-1')).toBeNull();
  });

  it('mirrors the output while the session runs: a stop that cannot copy it (the Pod gone) still leaves it readable', async () => {
    const output = agentctlOutput(['ready for instructions\n', 'you said: hello\n']);
    const { manager, store, id } = await readySession(output);
    // the live follower polls every 2 s and writes what is new: no stop, no command
    await vi.waitFor(async () => expect(text((await store.readRecordedOutput(id, 'agent-1')) ?? [])).toBe('ready for instructions\nyou said: hello\n'), { timeout: 15_000, interval: 100 });
    Object.assign(t!.ctx.live.get(id)!.instance.client, { readOutput: () => Promise.reject(new Error('forward closed: the Pod is gone')) });
    expect((await manager.stop(id)).state).toBe('stopped');
    expect(text(await collect(manager.logs(id, {})))).toBe('ready for instructions\nyou said: hello\n');
  }, 20_000);

  it('stops anyway when the mirror fails, and then refuses logs as before (resume first)', async () => {
    const broken = {
      readOutput: async (): Promise<OutputPage> => {
        throw new Error('forward closed');
      },
    };
    const { manager, store, id } = await readySession(broken);
    expect((await manager.stop(id)).state).toBe('stopped');
    expect(await store.readRecordedOutput(id, 'agent-1')).toBeNull();
    const err = await collect(manager.logs(id, {})).then(
      () => null,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(SessionStateError);
    expect((await manager.get(id)).state).toBe('stopped');
  });
});
