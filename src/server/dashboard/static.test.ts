import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONTENT_SECURITY_POLICY, staticTarget } from './static.js';

const root = resolve('/srv/web');

describe('staticTarget', () => {
  it('maps / to index.html and other paths to a file that may fall back to it', () => {
    expect(staticTarget(root, '/')).toEqual({ kind: 'file', path: join(root, 'index.html'), immutable: false, fallback: true });
    expect(staticTarget(root, '/sessions/abc')).toEqual({ kind: 'file', path: join(root, 'sessions', 'abc'), immutable: false, fallback: true });
  });

  it('maps /assets/* to the hashed file without a fallback', () => {
    expect(staticTarget(root, '/assets/index-abc.js')).toEqual({ kind: 'file', path: join(root, 'assets', 'index-abc.js'), immutable: true, fallback: false });
  });

  it.each(['/../etc/passwd', '/assets/../../etc/passwd', '/assets/%2e%2e/%2e%2e/etc/passwd', '/%2e%2e%2fsecret', '/a%5c..%5cb', '/x%00y', '/%E0%A4%A'])(
    'refuses %s',
    (path) => {
      expect(staticTarget(root, path)).toEqual({ kind: 'not_found' });
    },
  );
});

describe('CONTENT_SECURITY_POLICY', () => {
  it('allows no inline script and no framing', () => {
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self';");
    expect(CONTENT_SECURITY_POLICY).toContain("frame-ancestors 'none'");
    expect(CONTENT_SECURITY_POLICY).not.toMatch(/script-src[^;]*unsafe/);
  });
});
