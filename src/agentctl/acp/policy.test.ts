import { describe, expect, it } from 'vitest';
import { chooseOption, policyChoice } from './policy.js';

const ALL = [
  { optionId: 'a1', kind: 'allow_once' },
  { optionId: 'a2', kind: 'allow_always' },
  { optionId: 'r1', kind: 'reject_once' },
  { optionId: 'r2', kind: 'reject_always' },
];

describe('ACP permission policy', () => {
  it('ask never answers by itself', () => {
    for (const kind of ['edit', 'read', 'execute', null]) expect(policyChoice('ask', kind, ALL)).toBeNull();
  });

  it('auto-edits allows reads and edits once, and leaves the rest to a person', () => {
    expect(policyChoice('auto-edits', 'edit', ALL)).toBe('a1');
    expect(policyChoice('auto-edits', 'read', ALL)).toBe('a1');
    for (const kind of ['execute', 'delete', 'fetch', 'other', null, undefined]) expect(policyChoice('auto-edits', kind, ALL)).toBeNull();
  });

  it('auto-all allows everything, but cannot allow without an allow option', () => {
    expect(policyChoice('auto-all', 'execute', ALL)).toBe('a1');
    expect(policyChoice('auto-all', null, ALL)).toBe('a1');
    expect(policyChoice('auto-all', 'edit', [{ optionId: 'r1', kind: 'reject_once' }])).toBeNull();
  });

  it('an answer picks once or always of its side, falling back to the other of the pair', () => {
    expect(chooseOption(ALL, 'allow', false)).toBe('a1');
    expect(chooseOption(ALL, 'allow', true)).toBe('a2');
    expect(chooseOption(ALL, 'deny', false)).toBe('r1');
    expect(chooseOption(ALL, 'deny', true)).toBe('r2');
    expect(chooseOption([{ optionId: 'x', kind: 'allow_always' }], 'allow', false)).toBe('x');
    expect(chooseOption([{ optionId: 'y', kind: 'reject_once' }], 'deny', true)).toBe('y');
    expect(chooseOption([{ optionId: 'x', kind: 'allow_once' }], 'deny', false)).toBeNull();
  });
});
