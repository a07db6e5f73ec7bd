// Unit test of the architecture check's rules on small synthetic repositories (no disk, no README).
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { analyze, formatViolation, parseLayerTable } from './check-architecture.mjs';

const TABLE = `
## Architecture

| layer | may import | entries | what it is |
|---|---|---|---|
| \`shared\` | nothing | any file | helpers |
| \`core\` | \`shared\` | \`index.ts\`; \`light.ts\` (\`the loader\` loads it alone) | the core |
| \`app\` | \`core\`, \`shared\` | any file | the app |
| \`web\` | \`core\` | nothing | the dashboard |

after the table
`;
const layers = parseLayerTable(TABLE);

/** A small repository that passes every rule; each case adds or replaces files. */
const BASE = {
  'src/shared/text.ts': `export function upper(s: string): string { return s.toUpperCase(); }\n`,
  'src/core/index.ts': `export { Engine } from './engine.js';\n`,
  'src/core/engine.ts': `import { upper } from '../shared/text.js';\nexport class Engine { name = upper('e'); }\n`,
  'src/core/light.ts': `export const LIGHT = 1;\n`,
  'src/app/main.ts': `import { Engine } from '../core/index.js';\nimport { LIGHT } from '../core/light.js';\nnew Engine(); void LIGHT;\n`,
  'web/src/main.tsx': `import type { Engine } from '../../src/core/index.js';\nexport type E = Engine;\n`,
};
const ENTRIES = ['src/app/main.ts', 'web/src/main.tsx'];

function check(changes = {}, entryFiles = ENTRIES) {
  const files = new Map(Object.entries({ ...BASE, ...changes }).filter(([, text]) => text !== null));
  return analyze({ files, layers, entryFiles });
}
const rules = (violations) => violations.map((v) => `${v.file}:${v.line} ${v.rule}`);

describe('parseLayerTable', () => {
  it('reads the rows bottom to top, with their allowed layers and entries', () => {
    expect(layers).toEqual([
      { name: 'shared', folder: 'src/shared', mayImport: [], entries: null },
      { name: 'core', folder: 'src/core', mayImport: ['shared'], entries: ['index.ts', 'light.ts'] },
      { name: 'app', folder: 'src/app', mayImport: ['core', 'shared'], entries: null },
      { name: 'web', folder: 'web/src', mayImport: ['core'], entries: [] },
    ]);
  });

  it('reads the table of README.md', () => {
    const rows = parseLayerTable(readFileSync(new URL('../README.md', import.meta.url), 'utf8'));
    expect(rows[0]?.name).toBe('shared');
    expect(rows.map((r) => r.name)).toEqual(expect.arrayContaining(['executors/local', 'executors/kubernetes', 'controller', 'cli', 'web']));
  });

  it('fails without a table', () => {
    expect(() => parseLayerTable('# no table here')).toThrow(/no layer table/);
  });
});

describe('analyze', () => {
  it('passes a repository that keeps every rule', () => {
    expect(check()).toEqual([]);
  });

  it('finds an import cycle, type-only imports included', () => {
    const found = check({
      'src/app/a.ts': `import type { B } from './b.js';\nexport type A = { b?: B };\n`,
      'src/app/b.ts': `import type { A } from './a.js';\nexport type B = { a?: A };\n`,
      'src/app/main.ts': `${BASE['src/app/main.ts']}import type { A } from './a.js';\nimport type { B } from './b.js';\nexport type AB = A | B;\n`,
    });
    expect(rules(found)).toEqual(['src/app/a.ts:1 cycle']);
    expect(found[0]?.message).toContain('src/app/a.ts -> src/app/b.ts -> src/app/a.ts');
  });

  it('counts a dynamic import in a cycle', () => {
    const found = check({
      'src/app/a.ts': `export const load = () => import('./b.js');\n`,
      'src/app/b.ts': `import { load } from './a.js';\nexport const again = load;\n`,
      'src/app/main.ts': `${BASE['src/app/main.ts']}import { again } from './b.js';\nvoid again;\n`,
    });
    expect(rules(found)).toEqual(['src/app/a.ts:1 cycle']);
  });

  it('finds an upward import, and names what the layer may import', () => {
    const found = check({
      'src/core/engine.ts': `import { upper } from '../shared/text.js';\nimport '../app/setup.js';\nexport class Engine { name = upper('e'); }\n`,
      'src/app/setup.ts': `globalThis.name = 'x';\n`,
    });
    expect(rules(found)).toEqual(['src/core/engine.ts:2 layer']);
    expect(formatViolation(found[0])).toBe(
      "src/core/engine.ts:2: layer: imports '../app/setup.js': layer core may not import app (it may import: shared). Next: move the shared piece down to a layer both may use, or have the caller above pass it in.",
    );
  });

  it('holds a unit test beside the code to its layer, and keeps test code out of src', () => {
    const found = check({
      'src/core/engine.test.ts': `import '../app/setup.js';\nimport '../../test/support/fake.js';\n`,
      'src/core/light.ts': `import '../../test/support/fake.js';\nexport const LIGHT = 1;\n`,
      'test/support/fake.ts': `export const FAKE = 1;\n`,
      'src/app/setup.ts': `globalThis.name = 'x';\n`,
    });
    expect(rules(found)).toEqual(['src/core/engine.test.ts:1 layer', 'src/core/light.ts:1 layer']);
  });

  it('finds a web import of a layer the web row does not list', () => {
    const found = check({ 'web/src/main.tsx': `import { upper } from '../../src/shared/text.js';\nexport const u = upper;\n` });
    expect(rules(found)).toEqual(['web/src/main.tsx:1 layer']);
  });

  it('finds a deep import past an index.ts, but allows the named entries, the inside, and test/', () => {
    const found = check({
      'src/app/main.ts': `import { Engine } from '../core/engine.js';\nimport { LIGHT } from '../core/light.js';\nnew Engine(); void LIGHT;\n`,
      'src/core/inner/index.ts': `export { deep } from './deep.js';\n`,
      'src/core/inner/deep.ts': `export const deep = 1;\n`,
      'src/core/user.ts': `import { deep } from './inner/deep.js';\nexport const d = deep;\n`,
      'src/core/index.ts': `export { Engine } from './engine.js';\nexport { d } from './user.js';\n`,
      'test/engine.test.ts': `import { Engine } from '../src/core/engine.js';\nimport { d } from '../src/core/index.js';\nimport { deep } from '../src/core/inner/index.js';\nvoid Engine; void d; void deep;\n`,
    });
    expect(rules(found)).toEqual(['src/app/main.ts:1 entry', 'src/core/user.ts:1 entry']);
    expect(found[1]?.message).toContain('past src/core/inner/ (its entries: index.ts)');
  });

  it('finds a dead export and says whether to delete it or drop the keyword', () => {
    const found = check({ 'src/shared/text.ts': `export function upper(s: string): string { return pad(s).toUpperCase(); }\nexport function pad(s: string): string { return s; }\nexport const DEAD = 1;\n` });
    expect(rules(found)).toEqual(['src/shared/text.ts:2 unused-export', 'src/shared/text.ts:3 unused-export']);
    expect(found[0]?.next).toMatch(/drop the `export` keyword/);
    expect(found[1]?.next).toMatch(/delete it/);
  });

  it('counts a re-export through an index.ts as a use only when the index export is used', () => {
    const found = check({
      'src/core/engine.ts': `${BASE['src/core/engine.ts']}export const helper = 1;\nexport const viaIndex = 2;\n`,
      'src/core/index.ts': `export { Engine, helper, viaIndex } from './engine.js';\n`,
      'src/app/main.ts': `${BASE['src/app/main.ts']}import { viaIndex } from '../core/index.js';\nvoid viaIndex;\n`,
    });
    expect(rules(found)).toEqual(['src/core/engine.ts:3 unused-export']);
    expect(found[0]?.message).toContain('re-exported, unused, by src/core/index.ts');
  });

  it('follows export * and the names a dynamic import reads', () => {
    const found = check({
      'src/core/index.ts': `export * from './engine.js';\n`,
      'src/core/engine.ts': `${BASE['src/core/engine.ts']}export const a = 1;\nexport const b = 2;\nexport const c = 3;\n`,
      'src/app/main.ts': `${BASE['src/app/main.ts']}const { a } = await import('../core/index.js');\nconst b = import('../core/index.js').then((m) => m.b);\nvoid a; void b;\n`,
    });
    expect(rules(found)).toEqual(['src/core/engine.ts:5 unused-export']);
  });

  it('exempts the entry files and counts uses from test/, bench/ and scripts/', () => {
    const found = check({
      'src/app/main.ts': `${BASE['src/app/main.ts']}export const forTheBuild = 1;\n`,
      'src/shared/text.ts': `${BASE['src/shared/text.ts']}export const forATest = 1;\n`,
      'bench/x.bench.ts': `import { forATest } from '../src/shared/text.js';\nvoid forATest;\n`,
    });
    expect(found).toEqual([]);
  });

  it('reports a table that names a layer above, or ignores an index.ts', () => {
    const bad = parseLayerTable(TABLE.replace('| `shared` | nothing | any file |', '| `shared` | `app` | any file |').replace('| `app` | `core`, `shared` | any file |', '| `app` | `core`, `shared` | any file |'));
    const found = analyze({ files: new Map([...Object.entries(BASE), ['src/app/index.ts', 'export {};\n']]), layers: bad, entryFiles: ENTRIES });
    expect(found.filter((v) => v.rule === 'layer-table').map((v) => v.message)).toEqual([
      'layer `shared`: may import `app`, which is not a layer below it in the table (rows go bottom to top)',
      'layer `app`: src/app/index.ts exists, but the entries cell says "any file"',
    ]);
  });

  it('reports a folder of src that is in no layer', () => {
    const found = check({ 'src/stray/x.ts': `import { upper } from '../shared/text.js';\nupper('x');\n` });
    expect(rules(found)).toEqual(['src/stray/x.ts:1 layer']);
  });
});
