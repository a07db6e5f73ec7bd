/**
 * The controller in a child process that kills itself at a checkpoint (test/k8s/fixtures/
 * executor-crash-child.ts with BERTH_TEST_CRASH_AT): what the crash tests run and then recover from.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { ROOT } from './berth.js';

const CHILD = join(ROOT, 'test/k8s/fixtures/executor-crash-child.ts');
const CHILD_TIMEOUT_MS = 240_000;

export interface ChildResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the child with `extra` env (CHILD_DATA_DIR, CHILD_REPO_URL or CHILD_SESSION); it exits 137 right after `checkpoint`. */
export function crashChild(extra: Record<string, string>, checkpoint: string): Promise<ChildResult> {
  return new Promise((resolveChild, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD], {
      cwd: ROOT,
      env: { ...process.env, ...extra, BERTH_TEST_HOOKS: '1', BERTH_TEST_CRASH_AT: checkpoint },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), CHILD_TIMEOUT_MS);
    child.on('error', reject);
    child.on('close', (status) => {
      clearTimeout(timer);
      resolveChild({ status, stdout, stderr });
    });
  });
}
