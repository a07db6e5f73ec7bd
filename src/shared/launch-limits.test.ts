import { describe, expect, it } from 'vitest';
import { LAUNCH_LIMITS, launchRequestProblems, sessionNameProblem } from './launch-limits.js';

describe('sessionNameProblem', () => {
  it.each(['fix-tests', 'a', 'A.b_c-1', 'x'.repeat(63)])('accepts %j', (name) => {
    expect(sessionNameProblem(name)).toBeNull();
  });

  it.each(['', 'two\nlines', 'tab\there', 'esc\x1b[31m', '-lead', '.hidden', 'with space', 'x'.repeat(64), 'naïve', 's-0123456789'])('rejects %j', (name) => {
    expect(sessionNameProblem(name)).not.toBeNull();
  });
});

describe('launchRequestProblems', () => {
  it('accepts a prompt and env at their limits', () => {
    const env = { A: 'x'.repeat(LAUNCH_LIMITS.envEntryBytes - 2) };
    expect(launchRequestProblems({ prompt: 'p'.repeat(LAUNCH_LIMITS.promptBytes), env })).toEqual([]);
  });

  it('names the prompt and its limit in bytes, counting UTF-8', () => {
    const [problem] = launchRequestProblems({ prompt: 'é'.repeat(LAUNCH_LIMITS.promptBytes / 2 + 1) });
    expect(problem?.field).toBe('prompt');
    expect(problem?.message).toContain(`the limit is ${LAUNCH_LIMITS.promptBytes} bytes`);
  });

  it.each([
    [{ env: { BIG: 'x'.repeat(LAUNCH_LIMITS.envEntryBytes) } }, 'env.BIG'],
    [{ env: Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`V${i}`, 'x'.repeat(60 * 1024)])) }, 'env'],
    [{ env: Object.fromEntries(Array.from({ length: LAUNCH_LIMITS.envEntries + 1 }, (_, i) => [`V${i}`, ''])) }, 'env'],
    [{ prompt: 'a\0b' }, 'prompt'],
    [{ env: { A: 'a\0b' } }, 'env.A'],
    [{ name: 'bad\nname' }, 'name'],
  ])('reports %#', (req, field) => {
    expect(launchRequestProblems(req).map((p) => p.field)).toContain(field);
  });
});
