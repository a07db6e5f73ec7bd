/**
 * Test support of compose/ (not exported): a hand-built profile, an identity, and a runner that
 * executes generated scripts for real with every POSIX shell of the host (dash, busybox ash).
 * @module
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { KubernetesProfile } from '../types.js';
import { bootstrapPaths, type BootstrapPaths, type ResourceIdentity } from '../compose/index.js';

export const IDENTITY: ResourceIdentity = { instanceId: 'instance-1', sessionId: 'ses-1', executor: 'cluster', profile: 'k8s' };

export function profileFixture(overrides: Partial<KubernetesProfile> = {}): KubernetesProfile {
  return {
    platform: 'linux/amd64',
    mainContainer: 'agent',
    template: { metadata: { labels: { team: 'a' } }, spec: { containers: [{ name: 'agent', image: 'registry.example/agent:1.2' }] } },
    templateText: 'spec: …',
    workspace: { mode: 'managed_pvc', size: '10Gi', storageClass: null, accessModes: ['ReadWriteOnce'], claimName: null },
    setupScript: '',
    cleanupScript: '',
    budgets: { pvcBindingSeconds: 60, schedulingSeconds: 60, imagePullSeconds: 300, containerStartSeconds: 60, uploadSeconds: 300, cloneSeconds: 600, setupScriptSeconds: 600 },
    ...overrides,
  };
}

/** `[label, argv prefix]` of each shell to run scripts with: /bin/sh always, busybox when installed. */
export const SHELLS: [string, string[]][] = [
  ['sh', ['/bin/sh']],
  ...(existsSync('/usr/bin/busybox') || existsSync('/bin/busybox') ? [['busybox', [existsSync('/usr/bin/busybox') ? '/usr/bin/busybox' : '/bin/busybox', 'sh']] as [string, string[]]] : []),
];

interface ShResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function runSh(shell: string[], script: string, opts: { input?: Buffer; env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {}): ShResult {
  const [cmd = '/bin/sh', ...pre] = shell;
  const r = spawnSync(cmd, [...pre, '-c', script], { input: opts.input, env: opts.env ?? { PATH: process.env.PATH ?? '/usr/bin:/bin' }, cwd: opts.cwd, timeout: opts.timeoutMs ?? 20_000 });
  return { status: r.status, stdout: r.stdout?.toString('utf8') ?? '', stderr: r.stderr?.toString('utf8') ?? '' };
}

/** A fresh temp dir with the three volume roots created, and the paths under them. */
export function tempRoots(prefix = 'berth-compose-'): { dir: string; paths: BootstrapPaths } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const paths = bootstrapPaths({ runtimeDir: join(dir, 'opt-berth'), authDir: join(dir, 'run-berth'), workspace: join(dir, 'workspace') });
  for (const d of [paths.runtimeDir, paths.authDir, paths.workspace]) mkdirSync(d);
  return { dir, paths };
}
