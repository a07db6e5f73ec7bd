/**
 * A repository pool on the real cluster (`pool: {size: 1, repository: URL}`): each member keeps a
 * clone of the repository (the setup script run on it when the member is made), so a launch of that
 * repository is a fetch and a checkout: it sees a commit pushed after the member was made, a branch
 * asked for is checked out at its tip, and the setup script runs again only when the checkout
 * moved. A launch of another repository on the profile goes cold, saying why.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SessionView } from '../../src/api/index.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { waitFor } from './support/wait.js';

const env = clusterEnv();
const run = promisify(execFile);

/** Commits `files` on `branch` of the bare repository (created from main when new) and pushes it. */
async function push(repo: TestRepo, branch: string, files: Record<string, string>): Promise<void> {
  const work = await mkdtemp(join(tmpdir(), 'berth-push-'));
  const git = (...args: string[]) => run('git', ['-c', 'user.name=Berth Test', '-c', 'user.email=test@berth.invalid', ...args], { cwd: work });
  try {
    await git('clone', '-q', repo.path, '.');
    await git('checkout', '-q', '-B', branch);
    for (const [file, content] of Object.entries(files)) await writeFile(join(work, file), content);
    await git('add', '-A');
    await git('commit', '-q', '-m', `update ${branch}`);
    await git('push', '-q', 'origin', `HEAD:refs/heads/${branch}`);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

describe('repository pool on the cluster', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;
  let other: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('pooled', { 'README.md': '# v1\n' });
    other = await createTestRepo('other', { 'README.md': '# other\n' });
    h = await berthOnCluster({
      prefix: 'poolrepo',
      profiles: {
        repo: {
          pod_template: imageTemplate(env.agentImage),
          workspace: { mode: 'managed_pvc', size: '1Gi' },
          // counts its runs: once when the member is made, once more per moved checkout
          setup_script: 'echo run >> .git/setup-runs',
        },
      },
      profileFields: { repo: { pool: { size: 1, repository: repo.url } } },
    });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
    await other?.remove();
  });

  const readyMember = (): Promise<string> =>
    waitFor('a ready member', async () => {
      const db = new Database(join(h.dataDir, 'state', 'berth.db'), { readonly: true, fileMustExist: true });
      try {
        const rows = db.prepare("SELECT id FROM pool_members WHERE state = 'ready'").all() as { id: string }[];
        return rows[0]?.id;
      } finally {
        db.close();
      }
    }, { timeoutMs: 180_000, intervalMs: 250 });
  const warm = (v: SessionView): boolean => v.stages.some((s) => s.name === 'pool_claim' && s.status === 'succeeded');

  it('a launch of the pooled repository fetches into the member clone: later commits, branches, setup only when moved', async () => {
    const c = h.controller;
    await readyMember();
    // pushed after the member cloned: the claim's fetch must bring it
    await push(repo, 'main', { 'README.md': '# v2\n' });
    const t0 = performance.now();
    const a = await launchReady(c, { repository: { url: repo.url }, executor: 'repo', env: FAST_AGENT_ENV, name: 'pooled-main' });
    console.log(`[warm-pool-repo] warm launch of the pooled repository → ready: ${Math.round(performance.now() - t0)} ms`);
    expect(warm(a), JSON.stringify(a.stages)).toBe(true);
    expect((await execText(c, a.id, ['cat', 'README.md'])).stdout).toBe('# v2\n');
    expect((await execText(c, a.id, ['git', 'status', '--short', '--branch'])).stdout).toMatch(/^## main\.\.\.origin\/main\n/);
    expect((await execText(c, a.id, ['cat', '.git/setup-runs'])).stdout, 'made, then moved by the fetch').toBe('run\nrun\n');
    await c.remove(a.id);

    await readyMember();
    await push(repo, 'feature', { 'FEATURE.md': 'yes\n' });
    const b = await launchReady(c, { repository: { url: repo.url, branch: 'feature' }, executor: 'repo', env: FAST_AGENT_ENV, name: 'pooled-branch' });
    expect(warm(b)).toBe(true);
    expect((await execText(c, b.id, ['git', 'rev-parse', '--abbrev-ref', 'HEAD'])).stdout).toBe('feature\n');
    expect((await execText(c, b.id, ['cat', 'FEATURE.md'])).stdout).toBe('yes\n');
    await c.remove(b.id);

    await readyMember();
    const same = await launchReady(c, { repository: { url: repo.url }, executor: 'repo', env: FAST_AGENT_ENV, name: 'pooled-same' });
    expect(warm(same)).toBe(true);
    expect((await execText(c, same.id, ['cat', '.git/setup-runs'])).stdout, 'the member cloned the tip: the checkout did not move').toBe('run\n');
    await c.remove(same.id);
  }, 400_000);

  it('a launch of another repository on the profile goes cold and leaves the member for its repository', async () => {
    const c = h.controller;
    const member = await readyMember();
    const v = await launchReady(c, { repository: { url: other.url }, executor: 'repo', env: FAST_AGENT_ENV, name: 'other-repo' });
    expect(warm(v)).toBe(false);
    expect((await execText(c, v.id, ['cat', 'README.md'])).stdout).toBe('# other\n');
    expect(await readyMember()).toBe(member);
    await c.remove(v.id);
  }, 400_000);
});
