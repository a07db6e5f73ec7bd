import { describe, expect, it } from 'vitest';
import { parseGitStatus } from './git-status.js';

describe('parseGitStatus', () => {
  it('reads the branch line with upstream and ahead/behind', () => {
    const s = parseGitStatus('## berth/abc...origin/main [ahead 2, behind 1]\n');
    expect(s).toMatchObject({ branch: 'berth/abc', upstream: 'origin/main', ahead: 2, behind: 1, entries: [] });
    expect(parseGitStatus('## main\n')).toMatchObject({ branch: 'main', upstream: null, ahead: 0 });
    expect(parseGitStatus('## No commits yet on main\n').branch).toBe('main');
  });

  it('labels modified, staged, untracked and renamed entries', () => {
    const s = parseGitStatus('## main\n M src/a.ts\nA  new.txt\n?? notes.md\nR  old.txt -> moved.txt\n D gone\n');
    expect(s.entries.map((e) => [e.path, e.label])).toEqual([
      ['src/a.ts', 'modified'],
      ['new.txt', 'added'],
      ['notes.md', 'untracked'],
      ['moved.txt', 'renamed'],
      ['gone', 'deleted'],
    ]);
    expect(s.entries[3]!.from).toBe('old.txt');
  });

  it('unquotes C-quoted paths', () => {
    const s = parseGitStatus('?? "sp ace\\303\\251.txt"\n');
    expect(s.entries[0]!.path).toBe('sp aceé.txt');
  });
});
