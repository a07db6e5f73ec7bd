import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

// The typed client and what it imports are meant for a browser dashboard too: no Node APIs.
const BROWSER_SAFE = ['index.ts', 'client.ts', 'errors.ts', 'routes.ts', 'schemas.ts', 'streams.ts', 'openapi.ts'];

describe('src/api browser-safe modules', () => {
  it.each(BROWSER_SAFE)('%s imports no node:* module and uses no Node globals', (file) => {
    const text = readFileSync(new URL(`./${file}`, import.meta.url), 'utf8');
    expect(text).not.toMatch(/from ['"]node:/);
    expect(text).not.toMatch(/from ['"](ws|pino|better-sqlite3)['"]/);
    expect(text).not.toMatch(/\b(Buffer|process|require)\s*[.(]/);
    for (const m of text.matchAll(/^(?:import|export)\b[^;]*?from '(\.[^']+)'/gm)) {
      const target = m[1] ?? '';
      const local = target.startsWith('./') ? target.slice(2).replace(/\.js$/, '.ts') : null;
      expect(local === null ? target === '../controller/service.js' && /import type/.test(text) : BROWSER_SAFE.includes(local), `${file} imports ${target}`).toBe(true);
    }
  });
});
