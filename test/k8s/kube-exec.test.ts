// execInContainer against the real test cluster, as the executor's ServiceAccount: stdin delivered
// whole and closed, exit codes and signals, bounded output, and "not ready yet" told apart from
// "the command failed" (what the launch polls on).
import { createHash, randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPod, execInContainer, isExecUnavailable, KubeExecError } from '../../src/executors/kubernetes/kube/index.js';
import type { ExecResult } from '../../src/executors/kubernetes/kube/index.js';
import { clusterEnv, restrictedPod, waitForPodRunning } from './support/index.js';
import { executorFixture } from './support/executor-client.js';
import type { ExecutorFixture } from './support/executor-client.js';

const env = clusterEnv();
const POD = 'exec-target';
const CONTAINER = 'agent';

function sha256(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

async function failure(promise: Promise<unknown>): Promise<KubeExecError> {
  try {
    const result = await promise;
    throw new Error(`expected a KubeExecError, got ${JSON.stringify(result)}`);
  } catch (err) {
    if (!(err instanceof KubeExecError)) throw err;
    return err;
  }
}

describe('execInContainer', () => {
  let fx: ExecutorFixture;
  const run = (command: string[], extra: Partial<Parameters<typeof execInContainer>[1]> = {}): Promise<ExecResult> =>
    execInContainer(fx.client, { namespace: fx.ns.name, pod: POD, container: CONTAINER, command, ...extra });

  beforeAll(async () => {
    fx = await executorFixture('kube-exec');
    await createPod(
      fx.client,
      fx.ns.name,
      restrictedPod({ name: POD, containerName: CONTAINER, image: env.agentImage, command: ['sleep', 'infinity'] }),
    );
    await waitForPodRunning(fx.admin, fx.ns.name, POD);
  });

  afterAll(async () => {
    await fx?.cleanup();
  });

  it('keeps a silent command\'s exec open across keep-alive pings: the API server answers them', async () => {
    const result = await run(['sh', '-c', 'sleep 2; echo done'], { pingIntervalMs: 100, stdin: Buffer.from('') });
    expect(result).toMatchObject({ exitCode: 0, stdout: 'done\n' });
  });

  it('returns stdout, stderr and a non-zero exit code, with stdin fed to the command', async () => {
    const result = await run(['sh', '-c', 'tr a-z A-Z; echo "to stderr" >&2; exit 3'], { stdin: [Buffer.from('hello '), Buffer.from('stdin\n')] });
    expect(result).toMatchObject({ exitCode: 3, signal: null, stdout: 'HELLO STDIN\n', stderr: 'to stderr\n', stdoutTruncated: false });
  });

  it('delivers 5 MiB of binary stdin completely and closes it, so `cat > file` finishes', async () => {
    const blob = randomBytes(5 * 1024 * 1024);
    const chunks: Buffer[] = [];
    for (let at = 0; at < blob.length; at += 256 * 1024) chunks.push(blob.subarray(at, at + 256 * 1024));
    const result = await run(['sh', '-c', 'cat > /tmp/blob && sha256sum /tmp/blob | cut -d" " -f1 && wc -c < /tmp/blob'], { stdin: chunks });
    expect(result.stderr).toBe('');
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe(`${sha256(blob)}\n${blob.length}\n`);
  });

  it('closes an empty stdin at once (EOF without data)', async () => {
    const result = await run(['sh', '-c', 'cat > /tmp/empty && wc -c < /tmp/empty'], { stdin: [] });
    expect(result).toMatchObject({ exitCode: 0, stdout: '0\n', stderr: '' });
  });

  it('accepts a Readable as stdin', async () => {
    const result = await run(['wc', '-c'], { stdin: Readable.from([Buffer.alloc(1000, 1), Buffer.alloc(24, 2)]) });
    expect(result).toMatchObject({ exitCode: 0, stdout: '1024\n' });
  });

  it('reports a command killed by a signal with exit code 128+N and the signal name', async () => {
    const result = await run(['sh', '-c', 'kill -9 $$']);
    expect(result.exitCode).toBe(137);
    expect(result.signal).toBe('SIGKILL');
  });

  it('keeps only the end of a long output', async () => {
    const result = await run(['sh', '-c', 'seq 1 100000'], { maxOutputBytes: 1000 });
    expect(result.exitCode).toBe(0);
    expect(result.stdoutTruncated).toBe(true);
    expect(Buffer.byteLength(result.stdout)).toBe(1000);
    expect(result.stdout.endsWith('99999\n100000\n')).toBe(true);
  });

  it('fails with start_failed when the command does not exist, not with an exit code', async () => {
    const err = await failure(run(['no-such-command-xyz']));
    expect(err.kind, err.message).toBe('start_failed');
    expect(err.message).toMatch(/^kubernetes exec failed: /);
    expect(err.message).toContain('no-such-command-xyz');
  });

  it('refuses an unknown container and a missing Pod for good (not "unavailable")', async () => {
    const container = await failure(execInContainer(fx.client, { namespace: fx.ns.name, pod: POD, container: 'nope', command: ['true'] }));
    expect(container.kind, container.message).toBe('refused');
    expect(container.status).toBe(400);
    const pod = await failure(execInContainer(fx.client, { namespace: fx.ns.name, pod: 'no-such-pod', container: CONTAINER, command: ['true'] }));
    expect(pod.kind, pod.message).toBe('refused');
    expect(pod.status).toBe(404);
  });

  it('reports "unavailable" for a Pod that is not scheduled', async () => {
    const name = 'unscheduled';
    await createPod(
      fx.client,
      fx.ns.name,
      restrictedPod({ name, containerName: CONTAINER, image: env.busyboxImage, command: ['sleep', '3600'], nodeSelector: { 'berth.dev/no-such-node': 'x' } }),
    );
    const err = await failure(execInContainer(fx.client, { namespace: fx.ns.name, pod: name, container: CONTAINER, command: ['true'] }));
    expect(err.kind, err.message).toBe('unavailable');
    expect(isExecUnavailable(err)).toBe(true);
    expect(err.status).toBe(400);
  });

  it('sees only "unavailable" while a new container starts, then the exec succeeds', async () => {
    const name = 'fresh';
    const started = performance.now();
    await createPod(fx.client, fx.ns.name, restrictedPod({ name, containerName: CONTAINER, image: env.agentImage, command: ['sleep', 'infinity'] }));
    const seen: string[] = [];
    let result: ExecResult | undefined;
    while (!result) {
      try {
        result = await execInContainer(fx.client, { namespace: fx.ns.name, pod: name, container: CONTAINER, command: ['true'] });
      } catch (err) {
        if (!isExecUnavailable(err)) throw err;
        seen.push((err as KubeExecError).message);
        expect(seen.length, seen.join('\n')).toBeLessThan(600);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    console.log(`[k8s-timing] pod create -> first exec ok: ${(performance.now() - started).toFixed(0)} ms after ${seen.length} unavailable attempts`);
    console.log(`[k8s-exec] unavailable messages: ${[...new Set(seen.map((m) => m.replace(/[0-9a-f]{64}/g, '<id>')))].join(' | ')}`);
    expect(result.exitCode).toBe(0);
  });

  it('ends with kind "aborted" when the signal fires', async () => {
    const controller = new AbortController();
    const pending = run(['sleep', '30'], { signal: controller.signal });
    setTimeout(() => controller.abort(), 300);
    const err = await failure(pending);
    expect(err.kind).toBe('aborted');
  });

  it('measures a trivial exec', async () => {
    const times: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      const result = await run(['true']);
      times.push(performance.now() - t0);
      expect(result.exitCode).toBe(0);
    }
    times.sort((a, b) => a - b);
    console.log(`[k8s-timing] trivial exec (true), 5 runs: min ${times[0]?.toFixed(0)} ms, median ${times[2]?.toFixed(0)} ms, max ${times[4]?.toFixed(0)} ms`);
  });
});
