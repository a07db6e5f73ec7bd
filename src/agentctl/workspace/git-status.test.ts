import { describe, expect, it } from 'vitest';
import { parsePorcelainV2 } from './git-status.js';

const SHA = 'a'.repeat(40);
const z = (...records: string[]): string => records.map((r) => `${r}\0`).join('');

describe('parsePorcelainV2', () => {
  it('reads branch, head, upstream and ahead/behind', () => {
    const status = parsePorcelainV2(z(`# branch.oid ${SHA}`, '# branch.head main', '# branch.upstream origin/main', '# branch.ab +2 -3'));
    expect(status).toEqual({ branch: 'main', head: SHA, upstream: 'origin/main', ahead: 2, behind: 3, files: [], clean: true });
  });

  it('reports a repository without commits and a detached HEAD as null', () => {
    expect(parsePorcelainV2(z('# branch.oid (initial)', '# branch.head main')).head).toBeNull();
    expect(parsePorcelainV2(z(`# branch.oid ${SHA}`, '# branch.head (detached)')).branch).toBeNull();
  });

  it('parses changed, renamed (with the original path in the next record), unmerged, untracked and ignored', () => {
    const status = parsePorcelainV2(
      z(
        `1 .M N... 100644 100644 100644 ${SHA} ${SHA} src/with space.ts`,
        `1 A. N... 000000 100644 100644 ${'0'.repeat(40)} ${SHA} added.txt`,
        `2 R. N... 100644 100644 100644 ${SHA} ${SHA} R100 new name.txt`,
        'old name.txt',
        `u UU N... 100644 100644 100644 100644 ${SHA} ${SHA} ${SHA} conflict.txt`,
        '? untracked file.txt',
        '! ignored.log',
      ),
    );
    expect(status.files).toEqual([
      { path: 'src/with space.ts', orig_path: null, index: '.', worktree: 'M', kind: 'changed' },
      { path: 'added.txt', orig_path: null, index: 'A', worktree: '.', kind: 'changed' },
      { path: 'new name.txt', orig_path: 'old name.txt', index: 'R', worktree: '.', kind: 'renamed' },
      { path: 'conflict.txt', orig_path: null, index: 'U', worktree: 'U', kind: 'unmerged' },
      { path: 'untracked file.txt', orig_path: null, index: '?', worktree: '?', kind: 'untracked' },
      { path: 'ignored.log', orig_path: null, index: '!', worktree: '!', kind: 'ignored' },
    ]);
    expect(status.clean).toBe(false);
  });

  it('is clean when only ignored files are listed', () => {
    expect(parsePorcelainV2(z('! build/')).clean).toBe(true);
  });
});
