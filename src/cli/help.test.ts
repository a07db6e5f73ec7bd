import { describe, expect, it } from 'vitest';
import { commandHelp, mainHelp, wrap } from './help.js';
import { COMMANDS } from './registry.js';

describe('berth --help', () => {
  const text = mainHelp('9.9.9');

  it.each(COMMANDS.map((c) => c.name))('lists the %s command', (name) => {
    expect(text).toMatch(new RegExp(`^  ${name}\\s+\\S`, 'm'));
  });

  it.each([
    ['0', 'ok'],
    ['2', 'usage error'],
    ['3', 'not found'],
    ['4', 'conflict'],
    ['5', 'controller unreachable \\(start it with: berth serve\\)'],
  ])('documents exit code %s', (code, meaning) => {
    expect(text).toMatch(new RegExp(`^  ${code}  ${meaning}`, 'm'));
  });
});

describe('berth CMD --help', () => {
  it.each(COMMANDS.map((c) => [c.name, c] as const))('%s shows its usage, flags and the global flags', (_name, c) => {
    const help = commandHelp(c);
    expect(help.startsWith(`Usage: berth ${c.usage}\n`)).toBe(true);
    for (const flag of Object.keys(c.options)) expect(help).toContain(`--${flag}`);
    expect(help).toContain('--data-dir DIR');
    expect(help.includes('--output FORMAT')).toBe(c.formats.length > 0);
  });
});

describe('wrap', () => {
  it('breaks at word boundaries within the width', () => {
    expect(wrap('aaa bbb ccc ddd', 7)).toEqual(['aaa bbb', 'ccc ddd']);
  });
});
