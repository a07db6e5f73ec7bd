import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The typed client and what it imports are meant for a browser dashboard too: no Node APIs.
const BROWSER_SAFE = ['index.ts', 'client.ts', 'errors.ts', 'routes.ts', 'schemas.ts', 'streams.ts', 'openapi.ts'];
/** Pure modules outside src/api that the wire schemas share with the controller (checked below too). */
const SHARED_PURE = ['../shared/launch-limits.js'];

describe('src/api browser-safe modules', () => {
  it.each(SHARED_PURE)('%s imports nothing and uses no Node globals', (target) => {
    const text = readFileSync(new URL(target.replace(/\.js$/, '.ts'), import.meta.url), 'utf8');
    expect(text).not.toMatch(/^import\b/m);
    expect(text).not.toMatch(/\b(Buffer|process|require)\s*[.(]/);
  });

  it.each(BROWSER_SAFE)('%s imports no node:* module and uses no Node globals', (file) => {
    const text = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
    expect(text).not.toMatch(/from ['"]node:/);
    expect(text).not.toMatch(/from ['"](ws|pino|better-sqlite3)['"]/);
    expect(text).not.toMatch(/\b(Buffer|process|require)\s*[.(]/);
    for (const m of text.matchAll(/^(?:import|export)\b[^;]*?from '(\.[^']+)'/gm)) {
      const target = m[1] ?? '';
      const local = target.startsWith('./') ? target.slice(2).replace(/\.js$/, '.ts') : null;
      const allowed = local === null ? (target === '../controller/service.js' && /import type/.test(text)) || SHARED_PURE.includes(target) : BROWSER_SAFE.includes(local);
      expect(allowed, `${file} imports ${target}`).toBe(true);
    }
  });
});
