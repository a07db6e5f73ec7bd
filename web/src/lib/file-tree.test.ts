import { describe, expect, it } from 'vitest';
import { buildTree, diffLineKind } from './file-tree.js';

describe('buildTree', () => {
  it('nests paths into sorted directories, once each', () => {
    const t = buildTree(['src/b.ts', 'README.md', 'src/a.ts', 'src/lib/x.ts', 'README.md']);
    expect(t.files.map((f) => f.path)).toEqual(['README.md']);
    expect(t.dirs.map((d) => d.path)).toEqual(['src']);
    expect(t.dirs[0]!.files.map((f) => f.name)).toEqual(['a.ts', 'b.ts']);
    expect(t.dirs[0]!.dirs[0]!.files[0]!.path).toBe('src/lib/x.ts');
  });
});

describe('diffLineKind', () => {
  it('tells file headers, hunks, additions and deletions apart', () => {
    expect(['diff --git a/x b/x', '--- a/x', '+++ b/x', '@@ -1 +1 @@', '+new', '-old', ' same', 'index 1..2'].map(diffLineKind)).toEqual([
      'file',
      'file',
      'file',
      'hunk',
      'add',
      'del',
      'ctx',
      'meta',
    ]);
  });
});
