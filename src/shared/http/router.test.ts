import { describe, expect, it } from 'vitest';
import { Router } from './router.js';

describe('Router', () => {
  const router = new Router<string>()
    .add('GET', '/health', 'health')
    .add('GET', '/api/v1/processes/:id', 'get')
    .add('DELETE', '/api/v1/processes/:id', 'delete')
    .add('POST', '/api/v1/processes/:id/stdin', 'stdin');

  it('matches a static path', () => {
    expect(router.match('GET', '/health')).toEqual({ kind: 'found', handler: 'health', params: {} });
  });

  it('captures and decodes a parameter', () => {
    expect(router.match('GET', '/api/v1/processes/a%20b')).toEqual({ kind: 'found', handler: 'get', params: { id: 'a b' } });
    expect(router.match('GET', '/api/v1/processes/a%2Fb')).toEqual({ kind: 'found', handler: 'get', params: { id: 'a/b' } });
  });

  it('tells a wrong method apart from an unknown path', () => {
    expect(router.match('PUT', '/api/v1/processes/x')).toEqual({ kind: 'method_not_allowed', allowed: ['GET', 'DELETE'] });
    expect(router.match('GET', '/api/v1/nope')).toEqual({ kind: 'not_found' });
    expect(router.match('GET', '/api/v1/processes/x/stdin/more')).toEqual({ kind: 'not_found' });
  });

  it('names each allowed method once', () => {
    const r = new Router<string>().add('GET', '/x/:a', 'one').add('GET', '/x/:b', 'two').add('POST', '/x/:a', 'three');
    expect(r.match('PUT', '/x/1')).toEqual({ kind: 'method_not_allowed', allowed: ['GET', 'POST'] });
    expect(r.match('GET', '/x/1')).toMatchObject({ handler: 'one', params: { a: '1' } });
  });

  it('matches segment by segment: no empty parameter, no extra or missing slash', () => {
    expect(router.match('GET', '/api/v1/processes/')).toEqual({ kind: 'not_found' });
    expect(router.match('GET', '/api/v1/processes//stdin')).toEqual({ kind: 'not_found' });
    expect(router.match('GET', '/health/')).toEqual({ kind: 'not_found' });
    expect(router.match('GET', '//health')).toEqual({ kind: 'not_found' });
  });

  it('reports a malformed percent-encoding as a bad path', () => {
    expect(router.match('GET', '/api/v1/processes/%E0%A4%A')).toEqual({ kind: 'bad_path' });
  });

  it('accepts patterns built by the encoding route helpers', () => {
    const r = new Router<string>().add('GET', `/x/${encodeURIComponent(':id')}`, 'x');
    expect(r.match('GET', '/x/abc')).toEqual({ kind: 'found', handler: 'x', params: { id: 'abc' } });
  });

  it('matches methods case-insensitively', () => {
    expect(router.match('post', '/api/v1/processes/p1/stdin').kind).toBe('found');
  });
});
