import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { UsageError } from '../exit-codes.js';
import { parsePublicHosts, readTokenFile } from './serve-options.js';

const TOKEN = 'k'.repeat(20) + 'S3cret-token_value-xyz';

describe('readTokenFile', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'berth-token-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const file = (content: string): string => {
    const path = join(dir, 'token');
    writeFileSync(path, content);
    return path;
  };

  it('reads the token, without its trailing newline', () => {
    expect(readTokenFile(file(`${TOKEN}\n`), {})).toBe(TOKEN);
  });

  it('takes $BERTH_API_TOKEN_FILE when the flag is not given, the flag first', () => {
    const path = file(TOKEN);
    expect(readTokenFile(undefined, { BERTH_API_TOKEN_FILE: path })).toBe(TOKEN);
    expect(readTokenFile(undefined, { BERTH_API_TOKEN_FILE: '' })).toBeUndefined();
    expect(readTokenFile(undefined, {})).toBeUndefined();
    expect(() => readTokenFile(path, { BERTH_API_TOKEN_FILE: join(dir, 'missing') })).not.toThrow();
  });

  it.each([
    ['a short token', 'short-token\n', /at least 32 characters/],
    ['an empty file', '', /at least 32 characters/],
    ['a token with spaces', `${TOKEN} ${TOKEN}`, /one line of printable ASCII/],
    ['two lines', `${TOKEN}\n${TOKEN}\n`, /one line of printable ASCII/],
  ])('refuses %s, naming the flag and never showing the token', (_name, content, message) => {
    const path = file(content);
    const run = (): unknown => readTokenFile(path, {});
    expect(run).toThrow(UsageError);
    expect(run).toThrow(message);
    expect(run).toThrow(`--token-file ${path}`);
    try {
      run();
    } catch (err) {
      if (content.trim() !== '') expect((err as Error).message).not.toContain(content.trim().slice(0, 8));
    }
  });

  it('refuses a missing or unreadable file, naming the flag (and the variable it came from)', () => {
    expect(() => readTokenFile(join(dir, 'missing'), {})).toThrow(/--token-file .*missing: cannot be read \(ENOENT\)/);
    expect(() => readTokenFile(undefined, { BERTH_API_TOKEN_FILE: join(dir, 'missing') })).toThrow(/\(from \$BERTH_API_TOKEN_FILE\): cannot be read/);
    expect(() => readTokenFile(dir, {})).toThrow(/cannot be read \(EISDIR\)/);
    if (process.getuid?.() !== 0) {
      const path = file(TOKEN);
      chmodSync(path, 0o000);
      expect(() => readTokenFile(path, {})).toThrow(/cannot be read \(EACCES\)/);
    }
  });

  it('refuses a large file unread', () => {
    expect(() => readTokenFile(file('x'.repeat(5000)), {})).toThrow(/larger than 4096 bytes/);
  });
});

describe('parsePublicHosts', () => {
  it('takes repeated flags and comma lists, lower-cased, without duplicates', () => {
    expect(parsePublicHosts(['berth.agents.svc,berth.agents.svc.cluster.local', 'Berth', ' berth.example.com ', 'berth'], {})).toEqual([
      'berth.agents.svc',
      'berth.agents.svc.cluster.local',
      'berth',
      'berth.example.com',
    ]);
  });

  it('takes $BERTH_PUBLIC_HOSTS when the flag is not given, the flag first', () => {
    expect(parsePublicHosts(undefined, { BERTH_PUBLIC_HOSTS: 'a.example, b.example,' })).toEqual(['a.example', 'b.example']);
    expect(parsePublicHosts(['c.example'], { BERTH_PUBLIC_HOSTS: 'a.example' })).toEqual(['c.example']);
    expect(parsePublicHosts(undefined, {})).toEqual([]);
  });

  it('accepts IP addresses', () => {
    expect(parsePublicHosts(['10.0.0.7', 'fd00::1'], {})).toEqual(['10.0.0.7', 'fd00::1']);
  });

  it.each([
    ['a port', 'berth.example.com:443', /without a port/],
    ['a wildcard', '*.example.com', /wildcards/],
    ['a URL', 'https://berth.example.com', /not a DNS name/],
    ['an underscore', 'my_host.example', /not a DNS name/],
    ['a label ending in -', 'berth-.example', /not a DNS name/],
    ['a bad IPv4 address', '10.0.0.300', /not a valid IPv4/],
  ])('refuses %s, naming the flag and the value', (_name, value, message) => {
    expect(() => parsePublicHosts([value], {})).toThrow(message);
    expect(() => parsePublicHosts([value], {})).toThrow(`--public-host ${JSON.stringify(value)}`);
  });

  it('names the variable a bad value came from', () => {
    expect(() => parsePublicHosts(undefined, { BERTH_PUBLIC_HOSTS: 'ok.example,bad_name' })).toThrow(/"bad_name" \(from \$BERTH_PUBLIC_HOSTS\)/);
  });
});
