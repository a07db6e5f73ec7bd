import { spawnSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentctlProcess, cleanup, createInstance, tempDir, type InstanceApi } from '../support/agentctl.js';

interface Status {
  branch: string | null;
  head: string | null;
  files: Array<{ path: string; orig_path: string | null; index: string; worktree: string; kind: string }>;
  clean: boolean;
}
interface Log {
  commits: Array<{ sha: string; author_name: string; author_email: string; subject: string; date: string }>;
}

const repo = tempDir();
const empty = tempDir();
const plain = tempDir();
let agentctl: AgentctlProcess;
let token: string;
let api: InstanceApi;

function git(cwd: string, ...args: string[]): string {
  const res = spawnSync('git', args, { cwd, encoding: 'utf8' });
  if (res.status !== 0) throw new Error(`git ${args.join(' ')}: ${res.stderr}`);
  return res.stdout.trim();
}

beforeAll(async () => {
  for (const dir of [repo, empty]) {
    git(dir, 'init', '-q', '-b', 'main');
    git(dir, 'config', 'user.name', 'Repo Owner');
    git(dir, 'config', 'user.email', 'owner@example.com');
  }
  writeFileSync(join(repo, 'a.txt'), 'alpha\n');
  writeFileSync(join(repo, 'b.txt'), 'bravo bravo bravo bravo\n');
  writeFileSync(join(repo, 'with space.txt'), 'space\n');
  git(repo, 'add', '-A');
  git(repo, 'commit', '-q', '-m', 'initial commit');
  agentctl = await AgentctlProcess.start({ instancePortCount: 8 });
  token = await agentctl.handshake();
  api = await createInstance(agentctl, token, 'git', repo);
});
const review = tempDir();
const outer = tempDir();
const foreign = tempDir();
const hookOut = tempDir('agentctl-hook-');
afterAll(() => cleanup(repo, empty, plain, review, outer, foreign, hookOut));

function initRepo(dir: string, files: Record<string, string>): void {
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'config', 'user.name', 'Repo Owner');
  git(dir, 'config', 'user.email', 'owner@example.com');
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(join(dir, name, '..'), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'initial commit');
}

describe('agentctl git', () => {
  it('reports modified, staged, renamed and untracked files', async () => {
    writeFileSync(join(repo, 'a.txt'), 'alpha changed\n');
    writeFileSync(join(repo, 'new staged.txt'), 'new\n');
    git(repo, 'add', 'new staged.txt');
    renameSync(join(repo, 'b.txt'), join(repo, 'b-renamed.txt'));
    git(repo, 'add', '-A', 'b.txt', 'b-renamed.txt');
    writeFileSync(join(repo, 'untracked.txt'), 'u\n');

    const res = await api.request<Status>('GET', '/api/v1/git/status');
    expect(res.status).toBe(200);
    expect(res.body.branch).toBe('main');
    expect(res.body.head).toBe(git(repo, 'rev-parse', 'HEAD'));
    expect(res.body.clean).toBe(false);
    const files = [...res.body.files].sort((x, y) => x.path.localeCompare(y.path));
    expect(files).toEqual([
      { path: 'a.txt', orig_path: null, index: '.', worktree: 'M', kind: 'changed' },
      { path: 'b-renamed.txt', orig_path: 'b.txt', index: 'R', worktree: '.', kind: 'renamed' },
      { path: 'new staged.txt', orig_path: null, index: 'A', worktree: '.', kind: 'changed' },
      { path: 'untracked.txt', orig_path: null, index: '?', worktree: '?', kind: 'untracked' },
    ]);
  });

  it('diffs the working tree against the index, or against a base ref', async () => {
    const unstaged = await api.request<{ base: string | null; diff: string; truncated: boolean }>('GET', '/api/v1/git/diff');
    expect(unstaged.body.base).toBeNull();
    expect(unstaged.body.diff).toContain('+alpha changed');
    expect(unstaged.body.diff).not.toContain('new staged.txt');
    expect(unstaged.body.truncated).toBe(false);

    const vsHead = await api.request<{ diff: string }>('GET', '/api/v1/git/diff?base=HEAD');
    expect(vsHead.body.diff).toContain('new staged.txt');
    expect(vsHead.body.diff).toContain('+alpha changed');

    const onePath = await api.request<{ diff: string }>('GET', `/api/v1/git/diff?base=HEAD&path=${encodeURIComponent('new staged.txt')}`);
    expect(onePath.body.diff).toContain('new staged.txt');
    expect(onePath.body.diff).not.toContain('alpha');
  });

  it('turns git failures into 422 git_error and refuses option-like refs', async () => {
    const missing = await api.request('GET', '/api/v1/git/diff?base=no-such-ref');
    expect(missing.status).toBe(422);
    expect(missing.body).toMatchObject({ error: { code: 'git_error', message: expect.stringContaining('no-such-ref') } });
    const injected = await api.request('GET', `/api/v1/git/diff?base=${encodeURIComponent('--output=/tmp/pwned')}`);
    expect(injected.status).toBe(400);
    const escape = await api.request('GET', '/api/v1/git/diff?path=../x');
    expect(escape.status).toBe(400);
  });

  it('commits everything with an explicit author and returns the new sha', async () => {
    const res = await api.request<{ sha: string }>('POST', '/api/v1/git/commit', {
      body: { message: 'agent work\n\nwith a body', author: { name: 'Agent Smith', email: 'agent@example.com' } },
    });
    expect(res.status).toBe(201);
    expect(res.body.sha).toBe(git(repo, 'rev-parse', 'HEAD'));
    expect((await api.request<Status>('GET', '/api/v1/git/status')).body).toMatchObject({ clean: true, files: [] });

    const log = await api.request<Log>('GET', '/api/v1/git/log?limit=10');
    expect(log.body.commits.map((c) => c.subject)).toEqual(['agent work', 'initial commit']);
    expect(log.body.commits[0]).toMatchObject({ sha: res.body.sha, author_name: 'Agent Smith', author_email: 'agent@example.com' });
    expect(git(repo, 'log', '-1', '--format=%cn')).toBe('Repo Owner');
    expect((await api.request<Log>('GET', '/api/v1/git/log?limit=1')).body.commits).toHaveLength(1);
  });

  it('commits only the given paths', async () => {
    writeFileSync(join(repo, 'a.txt'), 'alpha again\n');
    writeFileSync(join(repo, 'with space.txt'), 'space again\n');
    const res = await api.request<{ sha: string }>('POST', '/api/v1/git/commit', { body: { message: 'only a', paths: ['a.txt'] } });
    expect(res.status).toBe(201);
    const status = (await api.request<Status>('GET', '/api/v1/git/status')).body;
    expect(status.files.map((f) => f.path)).toEqual(['with space.txt']);
    await api.request('POST', '/api/v1/git/commit', { body: { message: 'the rest' } });
  });

  it('answers 409 when there is nothing to commit', async () => {
    const res = await api.request('POST', '/api/v1/git/commit', { body: { message: 'empty' } });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({ error: { code: 'conflict', message: expect.stringContaining('nothing to commit') } });
    const allowed = await api.request('POST', '/api/v1/git/commit', { body: { message: 'empty on purpose', allow_empty: true } });
    expect(allowed.status).toBe(201);
  });

  it('reports a detached HEAD', async () => {
    git(repo, 'checkout', '-q', '--detach');
    const status = (await api.request<Status>('GET', '/api/v1/git/status')).body;
    expect(status.branch).toBeNull();
    expect(status.head).toBe(git(repo, 'rev-parse', 'HEAD'));
    git(repo, 'checkout', '-q', 'main');
  });

  it('handles a repository without commits, and a workspace that is not a repository', async () => {
    const emptyApi = await createInstance(agentctl, token, 'git-empty', empty);
    writeFileSync(join(empty, 'first.txt'), '1\n');
    const status = (await emptyApi.request<Status>('GET', '/api/v1/git/status')).body;
    expect(status).toMatchObject({ branch: 'main', head: null, clean: false });
    expect(status.files).toEqual([{ path: 'first.txt', orig_path: null, index: '?', worktree: '?', kind: 'untracked' }]);
    expect((await emptyApi.request<Log>('GET', '/api/v1/git/log')).body.commits).toEqual([]);
    const first = await emptyApi.request<{ sha: string }>('POST', '/api/v1/git/commit', { body: { message: 'root commit' } });
    expect(first.status).toBe(201);
    expect((await emptyApi.request<Log>('GET', '/api/v1/git/log')).body.commits.map((c) => c.sha)).toEqual([first.body.sha]);

    const plainApi = await createInstance(agentctl, token, 'not-a-repo', plain);
    const res = await plainApi.request('GET', '/api/v1/git/status');
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ error: { code: 'git_error', message: expect.stringContaining('not a git repository') } });
  });
});

describe('agentctl git - review fixes', () => {
  it('diffs against a base including untracked files, but not ignored ones, and leaves the index alone', async () => {
    initRepo(review, { 'kept.txt': 'kept\n', '.gitignore': 'ignored.txt\n' });
    const reviewApi = await createInstance(agentctl, token, 'git-review', review);
    writeFileSync(join(review, 'brand-new.txt'), 'fresh content\n');
    writeFileSync(join(review, 'ignored.txt'), 'noise\n');
    const res = await reviewApi.request<{ diff: string }>('GET', '/api/v1/git/diff?base=HEAD');
    expect(res.status).toBe(200);
    expect(res.body.diff).toContain('+fresh content');
    expect(res.body.diff).not.toContain('noise');
    const onePath = await reviewApi.request<{ diff: string }>('GET', '/api/v1/git/diff?base=HEAD&path=brand-new.txt');
    expect(onePath.body.diff).toContain('+fresh content');
    expect(git(review, 'status', '--porcelain'), 'the real index is untouched').toContain('?? brand-new.txt');
    const unstaged = await reviewApi.request<{ diff: string }>('GET', '/api/v1/git/diff');
    expect(unstaged.body.diff, 'without a base: unstaged changes only, as git shows them').not.toContain('fresh content');
  });

  it('takes diff and commit paths literally, so pathspec magic cannot reach past a workspace inside a larger repository', async () => {
    initRepo(outer, { 'outside.txt': 'outside\n', 'sub/inside.txt': 'inside\n' });
    writeFileSync(join(outer, 'outside.txt'), 'outside changed\n');
    const subApi = await createInstance(agentctl, token, 'git-sub', join(outer, 'sub'));
    for (const path of [':(top)outside.txt', ':/outside.txt']) {
      const res = await subApi.request<{ diff: string }>('GET', `/api/v1/git/diff?path=${encodeURIComponent(path)}`);
      expect(res.status).toBe(200);
      expect(res.body.diff, path).not.toContain('outside');
    }
    const commit = await subApi.request('POST', '/api/v1/git/commit', { body: { message: 'magic', paths: [':/outside.txt'] } });
    expect(commit.status).not.toBe(201);
    expect(git(outer, 'diff', '--cached', '--name-only'), 'nothing outside the workspace was staged').toBe('');
  });

  it('never hands the bootstrap nonce (or any AGENTCTL_ variable) to git and the hooks it runs', async () => {
    initRepo(foreign, { 'f.txt': 'f\n' });
    const hook = join(foreign, '.git/hooks/pre-commit');
    writeFileSync(hook, `#!/bin/sh\nenv > '${join(hookOut, 'env.txt')}'\n`);
    chmodSync(hook, 0o755);
    const foreignApi = await createInstance(agentctl, token, 'git-hook', foreign);
    writeFileSync(join(foreign, 'f.txt'), 'changed\n');
    expect((await foreignApi.request('POST', '/api/v1/git/commit', { body: { message: 'hooked' } })).status).toBe(201);
    const env = readFileSync(join(hookOut, 'env.txt'), 'utf8');
    expect(env).toContain('GIT_INDEX_FILE');
    expect(env).not.toContain(agentctl.nonce as string);
    expect(env).not.toMatch(/^AGENTCTL_/m);
  });

  it.skipIf(process.getuid?.() !== 0)('works in a workspace owned by another uid ("dubious ownership")', async () => {
    const owned = tempDir();
    try {
      initRepo(owned, { 'o.txt': 'o\n' });
      spawnSync('chown', ['-R', '4242:4242', owned]);
      chownSync(owned, 4242, 4242);
      const ownedApi = await createInstance(agentctl, token, 'git-owned', owned);
      const res = await ownedApi.request<Status>('GET', '/api/v1/git/status');
      expect(res.status).toBe(200);
      expect(res.body.files.map((f) => f.path)).toEqual([]);
      expect((await ownedApi.request<Log>('GET', '/api/v1/git/log')).body.commits).toHaveLength(1);
    } finally {
      rmSync(owned, { recursive: true, force: true });
    }
  });
});
