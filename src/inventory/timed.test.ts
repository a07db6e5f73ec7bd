import { describe, expect, it } from 'vitest';
import type { Inventory } from './inventory.js';
import { timeInventory } from './timed.js';

describe('timeInventory', () => {
  it('reports every call with its name, duration and outcome, and passes results and errors through', async () => {
    const inner = {
      backend: 'sqlite',
      getSession: async (id: string) => (id === 'x' ? null : Promise.reject(new Error('boom'))),
      listSecretIds: async () => ['a'],
    } as unknown as Inventory;
    const seen: [string, number, boolean][] = [];
    const timed = timeInventory(inner, (op, seconds, ok) => seen.push([op, seconds, ok]));
    expect(timed.backend).toBe('sqlite');
    expect(await timed.getSession('x')).toBeNull();
    await expect(timed.getSession('y')).rejects.toThrow('boom');
    expect(await timed.listSecretIds()).toEqual(['a']);
    expect(seen.map(([op, , ok]) => [op, ok])).toEqual([
      ['getSession', true],
      ['getSession', false],
      ['listSecretIds', true],
    ]);
    expect(seen.every(([, s]) => s >= 0 && s < 60)).toBe(true);
  });

  it('ignores an observer that throws', async () => {
    const inner = { backend: 'postgres', listSecretIds: async () => [] } as unknown as Inventory;
    const timed = timeInventory(inner, () => {
      throw new Error('metrics down');
    });
    expect(await timed.listSecretIds()).toEqual([]);
  });
});
