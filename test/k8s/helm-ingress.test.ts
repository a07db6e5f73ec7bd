// The Helm chart deploy/helm/berth with its Ingress (TLS, a private CA), reached the way a team
// reaches it: `https://berth.test:PORT` resolved by the user's DNS (here a private /etc/hosts in
// the CLI's own mount namespace), through an ingress controller (here Debian's nginx configured
// like ingress-nginx by test/k8s/support/ingress-nginx.ts: a stand-in, not ingress-nginx). Every
// remote CLI command goes through it: login --ca, launch, exec, shell (a WebSocket), logs -f (a
// stream), send, status, stop, resume, rm. The Ingress's proxy-read-timeout is short on purpose
// (30 s: twice the controller's 15 s keep-alive, so a keep-alive late on a loaded machine still
// arrives in time): a shell left idle longer than that and a quiet
// `logs -f` must stay open, which needs the controller's WebSocket pings and stream keep-alives.
// A replaced controller Pod is reached again through the same URL once nginx reloads with its new
// address. The dashboard's login cookie through the TLS Ingress is Secure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api, NetworkingV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../integration/cli/helpers.js';
import { FAST_AGENT_ENV } from './support/berth.js';
import { apiServerAddress, installChart, type ChartRelease } from './support/chart-release.js';
import { CONTROLLER_IMAGE_BUILD_TIMEOUT_MS, CONTROLLER_IMAGE_REPOSITORY, controllerImage } from './support/controller-image.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { kubectlOk, removeHelmHome } from './support/helm.js';
import { ingressCli, makeCertificates, requestVia, type IngressCli, type RunningCli, type TestCertificates } from './support/ingress-cli.js';
import { startTestIngressController, type TestIngressController } from './support/ingress-nginx.js';
import { loadKubeConfig } from './support/kube.js';
import { createTestNamespace, type TestNamespace } from './support/namespace.js';
import { waitFor } from './support/wait.js';

const env = clusterEnv();
const HOST = 'berth.test';
const RELEASE = 'team';
const MARKER = 'served-through-an-ingress';
const SESSION_SELECTOR = 'app.kubernetes.io/managed-by=berth';
/** The Ingress's proxy-read-timeout (s): twice the controller's keep-alive (15 s), far shorter than a real shell's pauses. */
const READ_TIMEOUT_S = 30;
/** How long the shell and the log follower stay quiet: past the read timeout. */
const IDLE_MS = (READ_TIMEOUT_S + 6) * 1000;
const READY_LINE = 'agent> ready for instructions';

/** The chart's values: the team's (as helm-install.test.ts) plus the Ingress with TLS. */
function values(image: string, sessionsNamespace: string, api: { host: string; port: string }): object {
  return {
    image: { repository: CONTROLLER_IMAGE_REPOSITORY, tag: image.slice(CONTROLLER_IMAGE_REPOSITORY.length + 1), pullPolicy: 'Never' },
    sessions: {
      namespace: sessionsNamespace,
      podTemplate: { spec: { enableServiceLinks: false, containers: [{ name: 'agent', image: env.agentImage, imagePullPolicy: 'Never' }] } },
      kubernetes: { workspace: { mode: 'managed_pvc', size: '1Gi' } },
    },
    extraEnv: [
      { name: 'KUBERNETES_SERVICE_HOST', value: api.host },
      { name: 'KUBERNETES_SERVICE_PORT', value: api.port },
    ],
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '1Gi' } },
    persistence: { size: '1Gi' },
    ingress: {
      enabled: true,
      className: 'berth-test-nginx',
      hosts: [HOST],
      tls: [{ secretName: 'berth-tls', hosts: [HOST] }],
      annotations: { 'nginx.ingress.kubernetes.io/proxy-read-timeout': String(READ_TIMEOUT_S) },
    },
  };
}

/** Resolves with the child's output once it contains `text`; rejects when the child ends first. */
function untilOutput(child: RunningCli, text: string, what: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (child.output().includes(text)) {
        child.stdout?.off('data', check);
        child.off('close', ended);
        resolve(child.output());
      }
    };
    const ended = (code: number | null): void => reject(new Error(`${what} ended (${code}) before ${JSON.stringify(text)}:\n${child.output()}\n${child.errors()}`));
    child.stdout?.on('data', check);
    child.once('close', ended);
    check();
  });
}

describe('the Helm chart behind an Ingress (TLS): the remote CLI, WebSockets and streams included', () => {
  const kc = loadKubeConfig(env.kubeconfig);
  const core = kc.makeApiClient(CoreV1Api);
  let release: TestNamespace;
  let sessions: TestNamespace;
  let repo: TestRepo;
  let work: string;
  let certs: TestCertificates;
  let ingress: TestIngressController;
  let chart: ChartRelease | undefined;
  let cli: IngressCli;
  let server = '';
  let id = '';
  const ok = async (args: string[]): Promise<string> => {
    const r = await cli.run(args);
    expect(r.code, `berth ${args.join(' ')}: ${r.stderr}${r.stdout}`).toBe(0);
    return r.stdout;
  };
  const https = (req: Parameters<typeof requestVia>[3]): ReturnType<typeof requestVia> => requestVia(ingress.httpsPort, HOST, certs.ca, req);
  const readyThroughIngress = (what: string): Promise<number> =>
    waitFor(what, async () => ((await https({ path: '/readyz' }).catch(() => ({ status: 0 }))).status === 200 ? performance.now() : undefined), { timeoutMs: 180_000, intervalMs: 250 });

  beforeAll(async () => {
    ensureBuilt();
    const image = await controllerImage();
    work = mkdtempSync(join(tmpdir(), 'berth-helm-ingress-'));
    release = await createTestNamespace(kc, 'ingress-release', { podSecurity: 'restricted' });
    sessions = await createTestNamespace(kc, 'ingress-sessions', { podSecurity: 'restricted' });
    repo = await createTestRepo('helm-ingress', { 'README.md': '# behind an ingress\n', BERTH_MARKER: `${MARKER}\n` });
    certs = await makeCertificates(work, HOST);
    await core.createNamespacedSecret({
      namespace: release.name,
      body: { metadata: { name: 'berth-tls' }, type: 'kubernetes.io/tls', data: { 'tls.crt': Buffer.from(certs.cert).toString('base64'), 'tls.key': Buffer.from(certs.key).toString('base64') } },
    });
    ingress = await startTestIngressController(kc, { namespace: release.name });
    chart = await installChart(kc, RELEASE, release.name, values(image, sessions.name, apiServerAddress(kc)));
    cli = ingressCli(work, [HOST]);
    server = `https://${HOST}:${ingress.httpsPort}`;
  }, CONTROLLER_IMAGE_BUILD_TIMEOUT_MS + 6 * 60_000);

  afterAll(async () => {
    await chart?.uninstall().catch((err: unknown) => console.error(String(err)));
    await Promise.all([release?.cleanup(), sessions?.cleanup()]);
    await ingress?.close();
    await repo?.remove();
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
    removeHelmHome();
  }, 300_000);

  it("serves the chart's Ingress over HTTPS with the private CA once the controller is ready; plain HTTP is redirected", async () => {
    const ing = await kc.makeApiClient(NetworkingV1Api).readNamespacedIngress({ name: chart!.fullname, namespace: release.name });
    expect(ing.spec?.ingressClassName).toBe(ingress.className);
    const t0 = performance.now();
    await readyThroughIngress(`/readyz 200 through https://${HOST}`);
    console.log(`[helm-ingress] helm install → /readyz 200 through the Ingress: ${((performance.now() - t0) / 1000).toFixed(1)} s (nginx configurations loaded: ${ingress.loads()})`);
    const pods = await chart!.pods();
    expect(ingress.endpoints(), 'nginx proxies to the controller Pod itself').toEqual([`${pods[0]!.status!.podIP!}:8080`]);
    const plain = await requestVia(ingress.httpPort, HOST, null, { path: '/readyz' });
    expect([plain.status, plain.headers.location]).toEqual([308, `https://${HOST}:${ingress.httpsPort}/readyz`]);
  });

  it('logs in with --ca, launches, execs (output and exit code), runs a shell and follows the logs, all through the Ingress', async () => {
    const token = await chart!.token();
    const login = await cli.run(['login', server, '--ca', certs.caFile, '--token-stdin', '--name', RELEASE], `${token}\n`);
    expect(login.code, login.stderr).toBe(0);
    expect(login.stdout).toContain(`logged in to ${server} as context ${RELEASE}`);
    expect(login.stdout + login.stderr).not.toContain(token);

    const envArgs = Object.entries(FAST_AGENT_ENV).flatMap(([k, v]) => ['--env', `${k}=${v}`]);
    const launch = await cli.run(['launch', '--repo', repo.url, '--agent', 'demo', '--name', 'ingress', '--prompt', 'hello through nginx', ...envArgs]);
    expect(launch.code, launch.stdout + launch.stderr).toBe(0);
    id = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
    expect(id, launch.stdout).not.toBe('');

    expect(await ok(['exec', id, '--', 'cat', 'BERTH_MARKER'])).toBe(`${MARKER}\n`);
    const seven = await cli.run(['exec', id, '--', 'sh', '-c', 'echo out; exit 7']);
    expect([seven.code, seven.stdout]).toEqual([7, 'out\n']);
    const shell = await cli.run(['shell', id], 'cat BERTH_MARKER; exit 4\n');
    expect(shell.code, `berth shell: ${shell.stderr}`).toBe(4);
    expect(shell.stdout).toContain(MARKER);

    // logs -f: what the agent says while it runs arrives on the open stream.
    const follow = cli.spawn(['logs', '-f', id]);
    try {
      await untilOutput(follow, READY_LINE, 'berth logs -f');
      await ok(['send', id, 'live-through-nginx']);
      await untilOutput(follow, 'agent> you said: live-through-nginx', 'berth logs -f');
    } finally {
      follow.kill('SIGINT');
      await follow.closed;
    }
    expect(ingress.accessLog(), 'the shell WebSocket went through nginx (101)').toMatch(new RegExp(`"GET /api/v1/sessions/${id}/shell\\S* HTTP/1.1" 101 `));
  });

  it(`keeps a shell idle and a quiet logs -f open past the Ingress's ${READ_TIMEOUT_S} s read timeout`, async () => {
    const shell = cli.spawn(['shell', id]);
    const follow = cli.spawn(['logs', '-f', id]);
    try {
      shell.stdin?.write('echo shell-$((40+2))\n');
      await untilOutput(shell, 'shell-42', 'berth shell');
      await untilOutput(follow, READY_LINE, 'berth logs -f');

      // The point of the test: nothing typed, nothing logged, longer than nginx waits for a read.
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      expect(shell.exitCode, `the idle shell was cut: ${shell.errors()}`).toBeNull();
      expect(follow.exitCode, `the quiet logs -f was cut: ${follow.errors()}`).toBeNull();

      await ok(['send', id, 'after-the-quiet']);
      await untilOutput(follow, 'agent> you said: after-the-quiet', 'berth logs -f');
      shell.stdin?.end('cat BERTH_MARKER; exit 5\n');
      expect(await shell.closed, shell.errors()).toBe(5);
      expect(shell.output()).toContain(MARKER);
    } finally {
      for (const child of [shell, follow]) if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await Promise.all([shell.closed, follow.closed]);
    }
  });

  it('sets the dashboard cookie Secure through the TLS Ingress', async () => {
    const token = await chart!.token();
    const codes = await https({ method: 'POST', path: '/api/v1/dashboard/codes', headers: { authorization: `Bearer ${token}` } });
    expect(codes.status, codes.body).toBe(200);
    const { code } = JSON.parse(codes.body) as { code: string };
    const login = await https({ method: 'POST', path: '/api/v1/dashboard/login', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ code }) });
    expect(login.status, login.body).toBe(200);
    const cookie = String(login.headers['set-cookie']);
    expect(cookie).toMatch(/HttpOnly/);
    expect(cookie).toMatch(/; Secure/);
  });

  it("reaches the session again through the same URL after the controller Pod is replaced (nginx reloaded with the new Pod's address)", async () => {
    const before = ingress.endpoints();
    const loads = ingress.loads();
    await kubectlOk(['-n', release.name, 'delete', 'pod', '-l', 'app.kubernetes.io/name=berth', '--timeout=120s']);
    const t0 = performance.now();
    await readyThroughIngress('the new controller Pod ready through the Ingress');
    console.log(`[helm-ingress] old controller Pod gone → /readyz 200 through the Ingress: ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    expect(ingress.loads(), 'nginx was reloaded').toBeGreaterThan(loads);
    expect(ingress.endpoints()).not.toEqual(before);
    expect(JSON.parse(await ok(['status', id, '-o', 'json']))).toMatchObject({ state: 'ready', agentProcess: { status: 'running' } });
    expect(await ok(['exec', id, '--', 'cat', 'BERTH_MARKER'])).toBe(`${MARKER}\n`);
  });

  it('stops, resumes and removes the session through the Ingress, leaving nothing in the sessions namespace', async () => {
    expect(await ok(['stop', id])).toContain(`Session ${id} is stopped`);
    expect(await ok(['resume', id])).toContain(`berth exec ${id}`);
    expect(JSON.parse(await ok(['status', id, '-o', 'json']))).toMatchObject({ state: 'ready', agentProcess: { status: 'running' } });
    const shell = await cli.run(['shell', id], 'cat BERTH_MARKER; exit 3\n');
    expect([shell.code, shell.stdout.includes(MARKER)]).toEqual([3, true]);
    const rm = await cli.run(['rm', id]);
    expect(rm.code, rm.stdout + rm.stderr).toBe(0);
    expect((await core.listNamespacedPod({ namespace: sessions.name, labelSelector: SESSION_SELECTOR })).items).toEqual([]);
    expect((await core.listNamespacedPersistentVolumeClaim({ namespace: sessions.name, labelSelector: SESSION_SELECTOR })).items).toEqual([]);
    expect(JSON.parse(await ok(['ls', '-o', 'json']))).toEqual({ sessions: [] });
  });
});
