import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { InventoryStore, type RecordedOutputInput } from '../inventory/index.js';
import { RunTail } from './output-follow-tail.js';

const chunk = (seq: number, text: string, stream: 'stdout' | 'stderr' = 'stdout'): RecordedOutputInput => ({ seq, stream, data: Buffer.from(text).toString('base64') });
const text = (chunks: readonly RecordedOutputInput[]) => chunks.map((c) => Buffer.from(c.data as Uint8Array).toString()).join('');

/** A small deterministic generator (no flaky random cases). */
function lcg(seed: number): () => number {
  let s = seed;
  return () => (s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
}

describe('RunTail', () => {
  it('keeps the last maxBytes: whole chunks dropped from the front, the oldest kept one cut to its tail', () => {
    const tail = new RunTail(10);
    expect(tail.append([chunk(0, 'abcd'), chunk(1, 'efgh', 'stderr')])).toBe(true);
    expect(text(tail.chunks())).toBe('abcdefgh');
    tail.append([chunk(2, 'ijkl')]);
    expect(tail.chunks().map((c) => [c.seq, c.stream])).toEqual([
      [0, 'stdout'],
      [1, 'stderr'],
      [2, 'stdout'],
    ]);
    expect(text(tail.chunks()), 'chunk 0 keeps its last two bytes').toBe('cdefghijkl');
    expect(tail.bytes).toBe(10);
    tail.append([chunk(3, 'mnopqrstuvwxyz')]);
    expect(tail.chunks().map((c) => c.seq), 'a chunk larger than the bound alone').toEqual([3]);
    expect(text(tail.chunks())).toBe('qrstuvwxyz');
    expect(tail.last).toBe(3);
  });

  it('skips repeated and older chunks, sorts a batch, and reports whether anything was new', () => {
    const tail = new RunTail(100);
    expect(tail.last).toBeNull();
    expect(tail.append([])).toBe(false);
    expect(tail.append([chunk(2, 'c'), chunk(1, 'b')])).toBe(true);
    expect(tail.append([chunk(1, 'b'), chunk(2, 'c')]), 'a page read again').toBe(false);
    expect(tail.append([chunk(0, 'a'), chunk(3, 'd')])).toBe(true);
    expect(tail.chunks().map((c) => c.seq)).toEqual([1, 2, 3]);
    expect(() => new RunTail(0)).toThrow(TypeError);
  });

  describe('holds exactly what the inventory keeps of the whole run', () => {
    const dir = mkdtempSync(join(tmpdir(), 'berth-run-tail-'));
    const store = InventoryStore.open({ dataDir: dir });
    afterAll(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it.each([1, 7, 64, 1000])('maxBytes %i, appended in batches', async (maxBytes) => {
      const next = lcg(maxBytes);
      const all = Array.from({ length: 300 }, (_, seq) => chunk(seq, 'x'.repeat(Math.floor(next() * 40)) + String(seq % 10), next() < 0.3 ? 'stderr' : 'stdout'));
      const tail = new RunTail(maxBytes);
      for (let i = 0; i < all.length; ) {
        const n = 1 + Math.floor(next() * 25);
        tail.append(all.slice(i, i + n));
        i += n;
        expect(tail.bytes).toBeLessThanOrEqual(maxBytes);
      }
      const id = `s-${maxBytes}`;
      await store.insertSession({
        id,
        name: null,
        executor: 'k8s',
        agent: 'demo',
        repository: { path: '/r' },
        request: { env: {}, secretEnv: [], prompt: null, agentCommand: ['x'], agentEnv: {}, profileEnv: {} },
        state: 'ready',
        error: null,
        stages: [],
        workspacePath: null,
      });
      const opts = { maxBytes };
      await store.putRecordedOutput(id, 'agent-1', all, opts);
      await store.putRecordedOutput(id, 'agent-2', tail.chunks(), opts);
      const whole = await store.readRecordedOutput(id, 'agent-1');
      const followed = await store.readRecordedOutput(id, 'agent-2');
      expect(followed).not.toBeNull();
      expect(followed).toEqual(whole);
    });
  });
});
