import { describe, expect, it } from 'vitest';
import { KeyedLock } from './keyed-lock.js';

describe('KeyedLock', () => {
  it('runs work for one key one at a time, in arrival order', async () => {
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
  });

  it('keeps going after a failing holder', async () => {
    const lock = new KeyedLock();
    await expect(lock.run('k', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(lock.run('k', () => Promise.resolve(1))).resolves.toBe(1);
  });
});
