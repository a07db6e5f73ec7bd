import { execFile } from 'node:child_process';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { clusterEnv } from './env.js';
import { uniqueName } from './namespace.js';

const run = promisify(execFile);

export interface TestRepo {
  name: string;
  /** Path of the bare repository on the host. */
  path: string;
  /** URL pods clone from, e.g. git://10.213.0.1:9418/name.git */
  url: string;
  /** Commit id of the single commit on `main`. */
  commit: string;
  remove(): Promise<void>;
}

async function git(cwd: string, ...args: string[]): Promise<string> {
  const { stdout } = await run('git', ['-c', 'user.name=Berth Test', '-c', 'user.email=test@berth.invalid', '-c', 'init.defaultBranch=main', ...args], {
    cwd,
  });
  return stdout.trim();
}

/**
 * Creates a bare repository under BERTH_TEST_GIT_ROOT with one commit on `main`
 * holding `files`; the cluster's git daemon serves it at `url`.
 */
export async function createTestRepo(prefix: string, files: Record<string, string>): Promise<TestRepo> {
  const env = clusterEnv();
  const name = uniqueName(prefix);
  const path = join(env.gitRoot, `${name}.git`);
  const work = await mkdtemp(join(tmpdir(), 'berth-repo-'));
  try {
    await git(env.gitRoot, 'init', '--quiet', '--bare', path);
    await git(work, 'init', '--quiet');
    for (const [file, content] of Object.entries(files)) {
      await mkdir(dirname(join(work, file)), { recursive: true });
      await writeFile(join(work, file), content);
    }
    await git(work, 'add', '-A');
    await git(work, 'commit', '--quiet', '-m', 'initial commit');
    await git(work, 'push', '--quiet', path, 'HEAD:refs/heads/main');
    await git(path, 'symbolic-ref', 'HEAD', 'refs/heads/main');
    const commit = await git(work, 'rev-parse', 'HEAD');
    return { name, path, url: `${env.gitBase}/${name}.git`, commit, remove: () => rm(path, { recursive: true, force: true }) };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
