/**
 * Where an instance keeps durable state (process records and output logs).
 *
 * - `AGENTCTL_STATE_DIR` set: `<dir>/<instance id>`.
 * - Otherwise: `<workspace>/.agentctl/state/<instance id>`. The workspace is the one place known to
 *   persist across agentctl restarts (on Kubernetes it is the PVC), so the default lives there.
 *   `<workspace>/.agentctl/.gitignore` holds `*`, which hides the whole directory (itself included)
 *   from `git status` whether or not the workspace is the repository root.
 * @module
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const WORKSPACE_STATE_DIR = '.agentctl';

async function ensureSelfIgnored(dir: string): Promise<void> {
  const file = join(dir, '.gitignore');
  const current = await readFile(file, 'utf8').catch(() => null);
  if (current === null || !current.split('\n').includes('*')) await writeFile(file, '# agentctl state, not workspace content\n*\n');
}

/** Creates (if needed) and returns the state directory of instance `id`. */
export async function instanceStateDir(configured: string | null, workspaceRoot: string, id: string): Promise<string> {
  if (configured !== null) {
    const dir = join(configured, id);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  }
  const base = join(workspaceRoot, WORKSPACE_STATE_DIR);
  await mkdir(base, { recursive: true, mode: 0o700 });
  await ensureSelfIgnored(base);
  const dir = join(base, 'state', id);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  return dir;
}
