import { describe, expect, it } from 'vitest';
import { gitReason, lsRemoteHasRef, repositoryCheckTarget } from './repo-check.js';

describe('repositoryCheckTarget', () => {
  // where the executor clones: on this host (local), or elsewhere (a Pod)
  const where = { 'this host': { clonesOnControllerHost: true }, 'a Pod': { clonesOnControllerHost: false } } as const;
  it.each([
    [{ path: '/src/app' }, 'this host', 'path'],
    [{ path: '/src/app' }, 'a Pod', 'path'],
    [{ url: 'file:///srv/app.git' }, 'this host', 'url'],
    [{ url: 'git://host/app.git' }, 'this host', 'url'],
    [{ url: 'https://host/app.git' }, 'this host', null],
    [{ url: 'git@host:app.git' }, 'this host', null],
    [{ url: 'file:///srv/app.git' }, 'a Pod', null],
    [{ url: 'git://host/app.git' }, 'a Pod', null],
  ] as const)('checks %j cloned on %s as %s', (repo, clonedOn, kind) => {
    expect(repositoryCheckTarget(repo, where[clonedOn])?.kind ?? null).toBe(kind);
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
