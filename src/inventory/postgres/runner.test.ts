import { describe, expect, it } from 'vitest';
import { describeUrl, isRetryable, redact, urlSecrets } from './runner.js';

const coded = (code: string, message = 'x'): Error => Object.assign(new Error(message), { code });

describe('isRetryable', () => {
  it('retries what means the connection failed (or a deadlock), not the statement', () => {
    for (const e of [coded('ECONNREFUSED'), coded('ECONNRESET'), coded('57P01'), coded('57P02'), coded('57P03'), coded('08006'), coded('08001'), coded('40P01'), new Error('Connection terminated unexpectedly')]) {
      expect(isRetryable(e), String((e as { code?: string }).code ?? e.message)).toBe(true);
    }
    for (const e of [coded('23505'), coded('28P01'), new Error('boom'), 'ECONNRESET']) expect(isRetryable(e)).toBe(false);
  });
});

describe('redact', () => {
  it('removes the connection string and its password, as written and decoded', () => {
    const url = 'postgresql://berth:p%40ss-w0rd@db.example:5432/berth';
    const secrets = urlSecrets(url);
    expect(redact(`failed: ${url} (p@ss-w0rd, p%40ss-w0rd)`, secrets)).toBe('failed: *** (***, ***)');
    expect(redact('host=db password=hunter22 user=x', [])).toBe('host=db password=*** user=x');
    expect(redact('see postgres://u:other-secret@h/db', [])).toBe('see postgres://u:***@h/db');
  });

  it('describes where a database is without its credentials', () => {
    expect(describeUrl('postgresql://berth:pw@db.example:5432/berth')).toBe('postgresql://db.example:5432/berth');
    expect(describeUrl('not a url pw')).toBe('the configured postgres database');
  });
});
