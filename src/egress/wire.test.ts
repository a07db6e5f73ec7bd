import { describe, expect, it } from 'vitest';
import { parseProxyAuthorization } from './auth.js';
import { judgeFirstBytes } from './gate.js';
import { endToEndHeaders } from './headers.js';
import { BadTargetError, parseConnectTarget, parseHttpTarget } from './target.js';

describe('targets', () => {
  it('parses CONNECT authorities into one canonical host form', () => {
    expect(parseConnectTarget('API.Example.com.:443')).toEqual({ host: 'api.example.com', port: 443 });
    expect(parseConnectTarget('[2001:DB8::1]:8443')).toEqual({ host: '2001:db8::1', port: 8443 });
    expect(parseConnectTarget('2130706433:443')).toEqual({ host: '127.0.0.1', port: 443 });
    expect(parseConnectTarget('0x7f.1:22')).toEqual({ host: '127.0.0.1', port: 22 });
    expect(parseConnectTarget('bücher.example:443')).toEqual({ host: 'xn--bcher-kva.example', port: 443 });
  });

  it('refuses CONNECT authorities without a port or with junk', () => {
    for (const bad of ['example.com', 'example.com:0', 'example.com:65536', ':443', 'a b:443', 'http://x:443', 'user@x:443', '[::1:443']) {
      expect(() => parseConnectTarget(bad), bad).toThrow(BadTargetError);
    }
  });

  it('parses absolute http:// URIs, and refuses others', () => {
    expect(parseHttpTarget('http://Example.com/a/b?c=d#frag')).toEqual({ host: 'example.com', port: 80, path: '/a/b?c=d', hostHeader: 'example.com' });
    expect(parseHttpTarget('http://[::1]:8080')).toEqual({ host: '::1', port: 8080, path: '/', hostHeader: '[::1]:8080' });
    expect(() => parseHttpTarget('/relative')).toThrow('a proxy request needs an absolute http:// URI');
    expect(() => parseHttpTarget('https://example.com/')).toThrow('use CONNECT for https:// URLs');
    expect(() => parseHttpTarget('http://user:pw@example.com/')).toThrow('credentials in the request URI are not forwarded');
  });
});

describe('Proxy-Authorization', () => {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  it('reads Basic session:token and Bearer token', () => {
    expect(parseProxyAuthorization(`Basic ${b64('sess-1:tok:with:colons')}`)).toEqual({ kind: 'credential', credential: { username: 'sess-1', token: 'tok:with:colons' } });
    expect(parseProxyAuthorization('bearer abc.def')).toEqual({ kind: 'credential', credential: { username: null, token: 'abc.def' } });
  });
  it('tells a missing header from a malformed one', () => {
    expect(parseProxyAuthorization(undefined)).toEqual({ kind: 'none' });
    for (const bad of ['Basic', `Basic ${b64('no-colon')}`, `Basic ${b64(':tok')}`, `Basic ${b64('user:')}`, 'Basic !!!', 'Digest x', 'Bearer a b']) {
      expect(parseProxyAuthorization(bad), bad).toEqual({ kind: 'malformed' });
    }
  });
});

describe('forwarded headers', () => {
  it('drops hop-by-hop headers, the proxy credential and what Connection names', () => {
    const raw = ['Host', 'x', 'Connection', 'keep-alive, X-Hop', 'X-Hop', '1', 'Proxy-Authorization', 'Basic c2VjcmV0', 'Keep-Alive', 'timeout=5', 'Transfer-Encoding', 'chunked', 'TE', 'trailers', 'Accept', '*/*', 'X-Kept', 'a', 'X-Kept', 'b'];
    expect(endToEndHeaders(raw, ['host'])).toEqual([['Accept', '*/*'], ['X-Kept', 'a'], ['X-Kept', 'b']]);
  });
});

describe('the tunnel rule for first bytes', () => {
  const named = { host: 'api.example.com', port: 443 };
  it('asks TLS with the CONNECT host as SNI on 443', () => {
    expect(judgeFirstBytes({ kind: 'hello', serverName: 'API.example.com.' }, named)).toBeNull();
    expect(judgeFirstBytes({ kind: 'hello', serverName: 'evil.example.com' }, named)).toBe('sni_mismatch');
    expect(judgeFirstBytes({ kind: 'hello', serverName: null }, named)).toBe('no_sni');
    expect(judgeFirstBytes({ kind: 'not-tls' }, named)).toBe('not_tls');
    expect(judgeFirstBytes({ kind: 'invalid', reason: 'x' }, named)).toBe('bad_client_hello');
  });
  it('lets other protocols through on other ports, but still checks TLS there', () => {
    expect(judgeFirstBytes({ kind: 'not-tls' }, { host: 'git.example.com', port: 22 })).toBeNull();
    expect(judgeFirstBytes({ kind: 'hello', serverName: 'other.example' }, { host: 'git.example.com', port: 8443 })).toBe('sni_mismatch');
  });
  it('accepts TLS without SNI to an allowed IP literal (SNI cannot name an address)', () => {
    expect(judgeFirstBytes({ kind: 'hello', serverName: null }, { host: '192.0.2.1', port: 443 })).toBeNull();
    expect(judgeFirstBytes({ kind: 'hello', serverName: 'example.com' }, { host: '192.0.2.1', port: 443 })).toBe('sni_mismatch');
  });
});
