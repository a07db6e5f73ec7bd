import { describe, expect, it } from 'vitest';
import { gitReason, lsRemoteHasRef, repositoryCheckTarget } from './repo-check.js';

describe('repositoryCheckTarget', () => {
  it.each([
    [{ path: '/src/app' }, 'local', 'path'],
    [{ url: 'file:///srv/app.git' }, 'local', 'url'],
    [{ url: 'git://host/app.git' }, 'local', 'url'],
    [{ url: 'https://host/app.git' }, 'local', null],
    [{ url: 'git@host:app.git' }, 'local', null],
    [{ url: 'file:///srv/app.git' }, 'kubernetes', null],
  ] as const)('checks %j on a %s executor as %s', (repo, type, kind) => {
    expect(repositoryCheckTarget(repo, type)?.kind ?? null).toBe(kind);
  });
});

describe('lsRemoteHasRef', () => {
  const out = 'abc\trefs/heads/main\ndef\trefs/tags/v1\nfed\trefs/tags/v1^{}\n';
  it.each([
    ['main', true],
    ['v1', true],
    ['mai', false],
    ['heads/main', false],
  ])('finds %s: %s', (ref, found) => {
    expect(lsRemoteHasRef(out, ref)).toBe(found);
  });
});

describe('gitReason', () => {
  it('keeps the fatal line of git stderr', () => {
    expect(gitReason("fatal: '/x' does not appear to be a git repository\nfatal: Could not read from remote repository.\n")).toBe(
      "fatal: '/x' does not appear to be a git repository",
    );
    expect(gitReason('')).toBe('git failed');
  });
});
