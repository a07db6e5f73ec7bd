import { describe, expect, it } from 'vitest';
import { KeyedLock } from './locks.js';

describe('KeyedLock', () => {
  it('serializes two operations on the same key and returns the map to empty', async () => {
    const lock = new KeyedLock();
    const order: string[] = [];
    let releaseFirst!: () => void;
    const gate = new Promise<void>((r) => (releaseFirst = r));
    const a = lock.run('x', async () => {
      order.push('a:start');
      await gate;
      order.push('a:end');
    });
    const b = lock.run('x', async () => {
      order.push('b:start');
      order.push('b:end');
    });
    await Promise.resolve();
    await Promise.resolve();
    expect(lock.size).toBe(1);
    expect(order).toEqual(['a:start']);
    releaseFirst();
    await Promise.all([a, b]);
    expect(order).toEqual(['a:start', 'a:end', 'b:start', 'b:end']);
    expect(lock.size, 'entries are reference-counted and removed at zero').toBe(0);
  });

  it('runs the holders of one key in arrival order (agentctl creates of one instance id)', async () => {
    const lock = new KeyedLock();
    const events: string[] = [];
    const task = (name: string) =>
      lock.run('k', async () => {
        events.push(`start ${name}`);
        await new Promise((r) => setImmediate(r));
        events.push(`end ${name}`);
      });
    await Promise.all([task('a'), task('b'), task('c')]);
    expect(events).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
    expect(lock.size).toBe(0);
  });

  it('runs different keys in parallel', async () => {
    const lock = new KeyedLock();
    let releaseA!: () => void;
    const gate = new Promise<void>((r) => (releaseA = r));
    const a = lock.run('a', () => gate);
    const b = await lock.run('b', () => Promise.resolve('b done'));
    expect(b).toBe('b done');
    expect(lock.size).toBe(1);
    releaseA();
    await a;
    expect(lock.size).toBe(0);
  });

  it('releases the key when the operation throws', async () => {
    const lock = new KeyedLock();
    await expect(lock.run('k', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(lock.size).toBe(0);
    await expect(lock.run('k', () => Promise.resolve(1))).resolves.toBe(1);
    expect(lock.size).toBe(0);
  });

  it('treats a double release as one', async () => {
    const lock = new KeyedLock();
    const release = await lock.acquire('k');
    const second = lock.acquire('k');
    release();
    release();
    const release2 = await second;
    expect(lock.size).toBe(1);
    release2();
    expect(lock.size).toBe(0);
  });
});
