import { describe, expect, it } from 'vitest';
import { parseEnvNames, parseEnvPairs } from './env-flags.js';
import { UsageError } from './exit-codes.js';

describe('parseEnvPairs', () => {
  it('splits at the first =', () => {
    expect(parseEnvPairs(['A=1', 'B=x=y', 'C='], '--env', 'launch')).toEqual({ A: '1', B: 'x=y', C: '' });
  });

  it.each(['novalue', '=v', '1A=v', 'A-B=v'])('rejects %s naming the flag', (pair) => {
    expect(() => parseEnvPairs([pair], '--env', 'launch')).toThrow(/--env: expected K=V/);
  });
});

describe('parseEnvNames', () => {
  it('keeps the names in order, without duplicates', () => {
    expect(parseEnvNames(['B', 'A_1', 'B'], '--secret-env', 'launch')).toEqual(['B', 'A_1']);
    expect(parseEnvNames(undefined, '--secret-env', 'launch')).toEqual([]);
  });

  it.each(['', '1A', 'A-B', 'A B'])('rejects %j naming the flag', (name) => {
    const err = (() => {
      try {
        parseEnvNames([name], '--secret-env', 'launch');
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(UsageError);
    expect((err as UsageError).message).toMatch(/^--secret-env: expected an environment variable name/);
  });

  it('explains that a K=V value is not taken (the value never goes on the command line)', () => {
    expect(() => parseEnvNames(['API_KEY=abc'], '--secret-env', 'launch')).toThrow(/give only the name/);
  });
});
