// Where a Pod's workspace comes from, and which agentctl build it gets: a local-path repository
// streamed in as a git bundle (branches and history), an http clone whose credential appears
// nowhere but the clone, an image without Node (the SEA build: busybox without a repository, and
// the agent image with node off PATH cloning a repository).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGitHttpServer, type GitHttpServer } from '../integration/support/git-http.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';

const env = clusterEnv();
const SECRET = 'pw-k8s-7f3a91c2e4b6';

function localRepo(dir: string): string {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]) => execFileSync('git', ['-c', 'user.email=t@example.com', '-c', 'user.name=t', ...args], { cwd: dir, stdio: 'ignore' });
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), '# local\n');
  git('add', '.');
  git('commit', '-qm', 'first');
  writeFileSync(join(dir, 'BERTH_MARKER'), 'marker-local\n');
  git('add', '.');
  git('commit', '-qm', 'second');
  git('checkout', '-q', '-b', 'feature');
  writeFileSync(join(dir, 'FEATURE'), 'feature work\n');
  git('add', '.');
  git('commit', '-qm', 'feature');
  git('checkout', '-q', 'main');
  return dir;
}

describe.concurrent('kubernetes executor: workspace sources and agentctl builds', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;
  let http: GitHttpServer;
  const work = mkdtempSync(join(tmpdir(), 'berth-k8s-src-'));

  beforeAll(async () => {
    repo = await createTestRepo('sources', { 'README.md': '# sources\n', BERTH_MARKER: 'marker-sources\n' });
    http = await startGitHttpServer(env.gitRoot, { user: 'agent', password: SECRET }, { host: new URL(env.gitBase).hostname });
    h = await berthOnCluster({
      prefix: 'sources',
      profiles: {
        node: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } },
        busybox: { pod_template: imageTemplate(env.busyboxImage), workspace: { mode: 'empty_dir' } },
        bundle: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'empty_dir' } },
        nonode: {
          // the agent image with node off PATH: the SEA build, with git to clone
          pod_template: imageTemplate(env.agentImage, { env: [{ name: 'PATH', value: '/usr/sbin:/usr/bin:/sbin:/bin' }] }),
          workspace: { mode: 'empty_dir' },
        },
      },
    });
  });

  afterAll(async () => {
    await h?.close();
    await http?.close();
    await repo?.remove();
    rmSync(work, { recursive: true, force: true });
  });

  it('sends a local-path repository as a git bundle: the branch asked for, its history, the other branches', async () => {
    const c = h.controller;
    const path = localRepo(join(work, 'local'));
    const v = await launchReady(c, { repository: { path, branch: 'feature' }, executor: 'node', env: FAST_AGENT_ENV });
    expect((await execText(c, v.id, ['git', 'rev-parse', '--abbrev-ref', 'HEAD'])).stdout.trim()).toBe('feature');
    expect((await execText(c, v.id, ['cat', 'FEATURE', 'BERTH_MARKER'])).stdout).toBe('feature work\nmarker-local\n');
    expect((await execText(c, v.id, ['git', 'log', '--format=%s'])).stdout.trim().split('\n')).toEqual(['feature', 'second', 'first']);
    expect((await execText(c, v.id, ['git', 'branch', '-a'])).stdout).toContain('origin/main');
    await c.remove(v.id);
  });

  it('clones over http with a credential that reaches only git: not the Pod spec, the PVC, .git/config, the inventory or the logs', async () => {
    const c = h.controller;
    const url = `${http.origin.replace('http://', `http://agent:${SECRET}@`)}/${repo.name}.git`;
    const v = await launchReady(c, { repository: { url }, executor: 'node', env: FAST_AGENT_ENV });
    expect(v.repository.url).not.toContain(SECRET);
    expect((await execText(c, v.id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-sources\n');
    expect(http.requests.some((r) => r.startsWith('200 ')), 'the clone authenticated').toBe(true);
    const gitConfig = (await execText(c, v.id, ['cat', '.git/config'])).stdout;
    expect(gitConfig).not.toContain(SECRET);
    // the secret in two halves: this command's own record (in agentctl's state) must not match itself
    const half = SECRET.length / 2;
    const grep = await execText(c, v.id, ['sh', '-c', 'grep -rl "$0$1" /run/berth /opt/berth /workspace 2>/dev/null; true', SECRET.slice(0, half), SECRET.slice(half)]);
    expect(grep.stdout, 'no file in the Pod holds it after the clone').toBe('');
    const pods = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    const pvcs = await h.core.listNamespacedPersistentVolumeClaim({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
    expect(JSON.stringify(pods.items)).not.toContain(SECRET);
    expect(JSON.stringify(pvcs.items)).not.toContain(SECRET);
    const out = await waitForOutput(c, v.id, /ready for instructions/);
    expect(out).not.toContain(SECRET);
    for (const f of readdirSync(join(h.dataDir, 'state'))) {
      if (f.startsWith('berth.db')) expect(readFileSync(join(h.dataDir, 'state', f)).toString('latin1'), f).not.toContain(SECRET);
    }
    await c.remove(v.id);
  });

  it('starts the bundle from the build\'s V8 code cache when the image runs the Node the cache was made with', async () => {
    const c = h.controller;
    const v = await launchReady(c, { executor: 'bundle', env: FAST_AGENT_ENV });
    const imageNode = (await execText(c, v.id, ['node', '--version'])).stdout.trim();
    // PID 1 is the Node pre-start running agentctl, titled like the launcher's command (the title
    // fills the pre-start's longer argv area: its NULs come out as trailing spaces)
    const agentctl = `${(await execText(c, v.id, ['sh', '-c', 'tr "\\0" " " </proc/1/cmdline'])).stdout.trimEnd()} `;
    // the same start by hand, with the loader saying whether V8 took the delivered cache
    const byHand = await execText(c, v.id, ['sh', '-c', 'AGENTCTL_CODE_CACHE_REPORT=1 /opt/berth/bin/agentctl --version']);
    // the cache is Node-version specific: the test image pins the Node this repository is built with
    if (imageNode === process.version) {
      expect(agentctl).toBe('node /opt/berth/agentctl-loader.cjs /opt/berth/agentctl.cjs ');
      expect(byHand.stderr).toBe('agentctl-loader: code cache used\n');
    } else {
      expect(agentctl).toBe('node /opt/berth/agentctl.cjs ');
      expect(byHand.stderr).toBe('');
    }
    expect(byHand).toMatchObject({ exitCode: 0, stdout: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) });
    expect(await waitForOutput(c, v.id, /ready for instructions/)).toContain('agent> starting in /workspace');
    await c.remove(v.id);
  });

  it('runs the SEA build in an image without Node or glibc (busybox, no repository), with the demo agent', async () => {
    const c = h.controller;
    const v = await launchReady(c, { executor: 'busybox', env: FAST_AGENT_ENV });
    expect((await execText(c, v.id, ['ls', '/opt/berth'])).stdout).toContain('agentctl-sea');
    expect(await waitForOutput(c, v.id, /ready for instructions/)).toContain('agent> starting in /workspace');
    expect(await execText(c, v.id, ['sh', '-c', 'echo $((6*7))'])).toMatchObject({ exitCode: 0, stdout: '42\n' });
    await c.remove(v.id);
  });

  it('delivers the SEA build when Node is not on PATH, and clones with the image\'s git', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'nonode', env: FAST_AGENT_ENV });
    expect((await execText(c, v.id, ['ls', '/opt/berth'])).stdout).toContain('agentctl-sea');
    expect((await execText(c, v.id, ['cat', 'BERTH_MARKER'])).stdout).toBe('marker-sources\n');
    expect((await execText(c, v.id, ['sh', '-c', 'echo "$PATH"'])).stdout.trim(), 'the template env reaches workspace processes').toBe('/usr/sbin:/usr/bin:/sbin:/bin');
    await c.remove(v.id);
  });
});
