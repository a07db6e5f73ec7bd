import { describe, expect, it } from 'vitest';
import { parseEnvLines } from './env-lines.js';

describe('parseEnvLines', () => {
  it('reads KEY=VALUE lines, skipping blanks and comments, keeping = in values', () => {
    expect(parseEnvLines('A=1\n\n# note\nB_2 = x=y z\r\nEMPTY=')).toEqual({
      ok: true,
      env: { A: '1', B_2: ' x=y z', EMPTY: '' },
    });
  });

  it('names the line without "="', () => {
    const r = parseEnvLines('A=1\nnonsense');
    expect(r).toMatchObject({ ok: false, line: 2 });
    if (!r.ok) expect(r.message).toContain('line 2');
  });

  it('refuses an invalid name and a duplicate', () => {
    expect(parseEnvLines('1A=x')).toMatchObject({ ok: false, line: 1 });
    expect(parseEnvLines('A-B=x')).toMatchObject({ ok: false, line: 1 });
    expect(parseEnvLines('A=1\nA=2')).toMatchObject({ ok: false, line: 2 });
  });
});
