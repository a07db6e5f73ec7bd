import { describe, expect, it } from 'vitest';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { allowMatcher, isIpLiteral, parseAllowEntry, parseAllowList, ruleMatches } from './policy.js';

const allows = (entries: string[], host: string): boolean => allowMatcher(parseAllowList(entries, 'network.allow'))(host);

describe('allow-list matching', () => {
  it('an exact name matches itself only, case-insensitively and ignoring a trailing dot', () => {
    expect(allows(['api.github.com'], 'api.github.com')).toBe(true);
    expect(allows(['API.GitHub.com.'], 'api.github.COM.')).toBe(true);
    expect(allows(['api.github.com'], 'github.com')).toBe(false);
    expect(allows(['api.github.com'], 'x.api.github.com')).toBe(false);
    expect(allows(['api.github.com'], 'api.github.com.evil.net')).toBe(false);
  });

  it('a wildcard matches subdomains at any depth but not the apex or look-alikes', () => {
    const rule = ['*.example.com'];
    expect(allows(rule, 'a.example.com')).toBe(true);
    expect(allows(rule, 'a.b.example.com')).toBe(true);
    expect(allows(rule, 'A.Example.Com.')).toBe(true);
    expect(allows(rule, 'example.com')).toBe(false);
    expect(allows(rule, 'badexample.com')).toBe(false);
    expect(allows(rule, 'example.com.evil.net')).toBe(false);
    expect(allows([...rule, 'example.com'], 'example.com')).toBe(true);
  });

  it('IP literals never match a name rule, only an exact address entry', () => {
    expect(allows(['127.0.0.1.nip.io', 'localhost'], '127.0.0.1')).toBe(false);
    expect(ruleMatches({ kind: 'suffix', suffix: '.0.0.1' }, '127.0.0.1')).toBe(false); // even a hand-built rule
    expect(ruleMatches({ kind: 'exact', host: '127.0.0.1' }, '127.0.0.1')).toBe(false);
    expect(allows(['127.0.0.1'], '127.0.0.1')).toBe(true);
    expect(allows(['127.0.0.1'], '127.0.0.2')).toBe(false);
    expect(allows(['[2001:db8::1]'], '2001:db8:0::1')).toBe(true);
    expect(allows(['2001:db8::1'], '[2001:DB8::1]')).toBe(true);
    expect(isIpLiteral('[::1]')).toBe(true);
    expect(isIpLiteral('localhost')).toBe(false);
  });

  it('punycode names match as given; no Unicode folding', () => {
    expect(allows(['xn--bcher-kva.example'], 'xn--bcher-kva.example')).toBe(true);
    expect(allows(['*.xn--bcher-kva.example'], 'www.xn--bcher-kva.example')).toBe(true);
    expect(allows(['xn--bcher-kva.example'], 'bucher.example')).toBe(false);
  });

  it('an address rule never matches a name', () => {
    expect(ruleMatches({ kind: 'ip', address: '192.0.2.1' }, 'example.com')).toBe(false);
  });
});

describe('allow-entry validation', () => {
  const error = (raw: unknown, path = 'network.allow[2]'): string => {
    try {
      parseAllowEntry(raw, path);
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigFieldError);
      return (err as Error).message;
    }
    throw new Error(`${JSON.stringify(raw)} was accepted`);
  };

  it('names the field and the entry', () => {
    expect(error('*.*.x')).toBe('network.allow[2]: "*.*.x" is not a hostname or *.hostname');
    expect(error('exa mple.com')).toBe('network.allow[2]: "exa mple.com" is not a hostname or *.hostname');
    expect(error('-bad.com')).toContain('is not a hostname');
    expect(error('a..b')).toContain('is not a hostname');
    expect(error('')).toContain('is not a hostname');
    expect(error('foo*.example.com')).toContain('is not a hostname');
    expect(error('*')).toContain('is not a hostname');
    expect(error('https://example.com')).toContain('is not a hostname');
    expect(error('example.com:443')).toContain('is not a hostname');
    expect(error(`${'a'.repeat(64)}.com`)).toContain('is not a hostname');
    expect(error('127.1')).toContain('is not a hostname');
  });

  it('refuses a wildcard over a single label, non-strings and Unicode', () => {
    expect(error('*.com')).toBe('network.allow[2]: "*.com" is too broad: a wildcard must cover at least two labels (*.example.com)');
    expect(error(42)).toBe('network.allow[2]: must be a string (a host name, *.host name or IP address)');
    expect(error('bücher.example')).toContain('punycode (xn--)');
  });

  it('numbers the entries of a list', () => {
    expect(() => parseAllowList(['ok.example', 'also.ok', '*.*.x'], 'network.allow')).toThrow('network.allow[2]: "*.*.x"');
    expect(() => parseAllowList('example.com', 'network.allow')).toThrow('network.allow: must be a list of host names');
  });

  it('accepts names, wildcards and addresses', () => {
    expect(parseAllowEntry('Example.COM.', 'x')).toEqual({ kind: 'exact', host: 'example.com' });
    expect(parseAllowEntry('*.example.com', 'x')).toEqual({ kind: 'suffix', suffix: '.example.com' });
    expect(parseAllowEntry('localhost', 'x')).toEqual({ kind: 'exact', host: 'localhost' });
    expect(parseAllowEntry('10.0.0.1', 'x')).toEqual({ kind: 'ip', address: '10.0.0.1' });
    expect(parseAllowEntry('[::FFFF:10.0.0.1]', 'x')).toEqual({ kind: 'ip', address: '::ffff:a00:1' });
  });
});
