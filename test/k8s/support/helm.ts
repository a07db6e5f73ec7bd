/**
 * The test cluster's own command-line tools as a user runs them: `helm` (BERTH_TEST_HELM) and
 * `kubectl` (BERTH_TEST_KUBECTL), each a command line `<cluster binary> <sub-command>` split on
 * spaces (no shell), against the admin kubeconfig; and `kubectl port-forward svc/NAME` kept running
 * in the background with the local port it printed.
 * @module
 */
import { execFile, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { clusterEnv, requireEnv } from './env.js';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The words of a command line held in an environment variable (`<bin> <sub-command>`). */
function commandOf(envName: string): [string, string[]] {
  const [bin, ...pre] = requireEnv(envName).trim().split(/\s+/);
  return [bin!, pre];
}

/** Helm's cache, config and data go to a throwaway directory, never the user's. */
let helmHome: string | undefined;
function toolEnv(): NodeJS.ProcessEnv {
  helmHome ??= mkdtempSync(join(tmpdir(), 'berth-helm-home-'));
  return {
    ...process.env,
    KUBECONFIG: clusterEnv().kubeconfig,
    HELM_CACHE_HOME: join(helmHome, 'cache'),
    HELM_CONFIG_HOME: join(helmHome, 'config'),
    HELM_DATA_HOME: join(helmHome, 'data'),
  };
}

/** Removes helm's throwaway home (call once, after the last helm command). */
export function removeHelmHome(): void {
  if (helmHome !== undefined) rmSync(helmHome, { recursive: true, force: true });
  helmHome = undefined;
}

function run(envName: string, args: string[], timeoutMs: number): Promise<CommandResult> {
  const [bin, pre] = commandOf(envName);
  return new Promise((resolve) => {
    execFile(bin, [...pre, ...args], { env: toolEnv(), timeout: timeoutMs, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err === null ? 0 : typeof err.code === 'number' ? err.code : 1;
      resolve({ code, stdout, stderr: err !== null && code === 1 && stderr === '' ? err.message : stderr });
    });
  });
}

/** `helm ARGS` (the test cluster's Helm). */
export function helm(args: string[], timeoutMs = 600_000): Promise<CommandResult> {
  return run('BERTH_TEST_HELM', args, timeoutMs);
}

/** `kubectl ARGS` (the test cluster's kubectl). */
export function kubectl(args: string[], timeoutMs = 180_000): Promise<CommandResult> {
  return run('BERTH_TEST_KUBECTL', args, timeoutMs);
}

/** `kubectl ARGS`, its stdout; a failure throws with stderr. */
export async function kubectlOk(args: string[], timeoutMs?: number): Promise<string> {
  const r = await kubectl(args, timeoutMs);
  if (r.code !== 0) throw new Error(`kubectl ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

export interface ServiceForward {
  /** The local port on 127.0.0.1. */
  port: number;
  /** Stops kubectl and waits for it to exit. */
  close(): Promise<void>;
}

/**
 * `kubectl -n NAMESPACE port-forward svc/SERVICE LOCAL:REMOTE` (LOCAL 0: kubectl picks one), resolved
 * once kubectl prints `Forwarding from 127.0.0.1:PORT`. kubectl forwards to one Pod behind the
 * Service, chosen at start: after that Pod is replaced, forward again.
 */
export function forwardService(namespace: string, service: string, remotePort: number, localPort = 0): Promise<ServiceForward> {
  const [bin, pre] = commandOf('BERTH_TEST_KUBECTL');
  const args = [...pre, '-n', namespace, 'port-forward', '--address', '127.0.0.1', `svc/${service}`, `${localPort}:${remotePort}`];
  const child = spawn(bin, args, { env: toolEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const close = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  };
  let out = '';
  return new Promise<ServiceForward>((resolve, reject) => {
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(out);
      if (m) resolve({ port: Number(m[1]), close });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('error', reject);
    void exited.then(() => reject(new Error(`kubectl port-forward svc/${service} exited before forwarding:\n${out.slice(-2000)}`)));
  });
}
