/**
 * A minimal ingress controller for the tests: Debian's real nginx, run on the host (loopback, two
 * ephemeral ports), configured from the networking.k8s.io/v1 Ingress objects of one IngressClass
 * in one namespace. It is a test stand-in modelled on ingress-nginx's defaults (see
 * ingress-nginx-conf.ts for what it renders), not ingress-nginx.
 *
 * Like ingress-nginx it proxies to the Pods behind a Service, not to the Service's ClusterIP: each
 * backend's Service port (by name or number) is resolved to the ready endpoints of its
 * discovery.k8s.io/v1 EndpointSlices (the host reaches Pod IPs on the bridge; the test cluster has no
 * kube-proxy). Watches on Ingresses, Services, EndpointSlices and Secrets re-render nginx.conf; a
 * changed one is checked (`nginx -t`) and loaded with `nginx -s reload` (a replaced controller Pod's
 * new address reaches nginx that way). TLS certificates come from the Ingress's kubernetes.io/tls
 * Secrets, written 0600 into the controller's own temp directory.
 * @module
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { CoreV1Api, DiscoveryV1Api, NetworkingV1Api, Watch, type KubeConfig, type V1EndpointSlice, type V1Ingress, type V1Service } from '@kubernetes/client-node';
import { pathSettings, renderNginxConf, type ConfLayout, type RenderedPath, type RenderedServer } from './ingress-nginx-conf.js';
import { isNotFound } from './kube.js';
import { waitFor } from './wait.js';

const run = promisify(execFile);
const NGINX = '/usr/sbin/nginx';
/** The controller name our IngressClass names (no real controller claims it). */
const CONTROLLER = 'berth.dev/test-nginx';

export interface TestIngressController {
  /** The IngressClass whose Ingresses this controller serves. */
  readonly className: string;
  /** Plain HTTP on 127.0.0.1 (a TLS host redirects it to HTTPS). */
  readonly httpPort: number;
  /** HTTPS on 127.0.0.1, for the hosts an Ingress lists under `tls`. */
  readonly httpsPort: number;
  /** How many configurations nginx has loaded (its start counts as the first). */
  loads(): number;
  /** nginx's access log so far: `addr "request" status bytes time "host" upstream upstream-status` per line. */
  accessLog(): string;
  /** The backends (`ip:port`) of the configuration loaded last. */
  endpoints(): string[];
  /** Stops the watches and nginx (by PID), deletes the IngressClass and the temp directory. */
  close(): Promise<void>;
}

/** A free port on 127.0.0.1 (the kernel's pick; nginx binds it right after). */
async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve, reject) => srv.once('error', reject).listen(0, '127.0.0.1', resolve));
  const port = (srv.address() as { port: number }).port;
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/** The ready `ip:port`s behind `svc`'s port `ref` (a port name, or a number), from its EndpointSlices. */
function readyEndpoints(svc: V1Service, slices: V1EndpointSlice[], ref: { name?: string; number?: number }): string[] {
  const port = svc.spec?.ports?.find((p) => (ref.name !== undefined && ref.name !== '' ? p.name === ref.name : p.port === ref.number));
  if (port === undefined) return [];
  const out = new Set<string>();
  for (const slice of slices) {
    if (slice.metadata?.labels?.['kubernetes.io/service-name'] !== svc.metadata?.name || slice.addressType !== 'IPv4') continue;
    // A slice's ports carry the Service port's name and the resolved targetPort (named ones included).
    const target = slice.ports?.find((p) => (p.name ?? '') === (port.name ?? ''))?.port;
    if (target === undefined) continue;
    for (const ep of slice.endpoints ?? []) if (ep.conditions?.ready !== false) for (const a of ep.addresses) out.add(`${a}:${target}`);
  }
  return [...out].sort();
}

interface Cluster {
  core: CoreV1Api;
  net: NetworkingV1Api;
  discovery: DiscoveryV1Api;
  namespace: string;
  className: string;
  dir: string;
}

/** The certificate files of the Secret `name` (kubernetes.io/tls), written 0600 under `dir/certs`; undefined while it is missing. */
async function tlsFiles(c: Cluster, name: string): Promise<{ certFile: string; keyFile: string } | undefined> {
  let secret;
  try {
    secret = await c.core.readNamespacedSecret({ name, namespace: c.namespace });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  const crt = secret.data?.['tls.crt'];
  const key = secret.data?.['tls.key'];
  if (secret.type !== 'kubernetes.io/tls' || crt === undefined || key === undefined) return undefined;
  // The resourceVersion in the names: a changed Secret is a changed nginx.conf, so a reload.
  const base = join(c.dir, 'certs', `${name}-${secret.metadata?.resourceVersion ?? '0'}`);
  writeFileSync(`${base}.crt`, Buffer.from(crt, 'base64'), { mode: 0o600 });
  writeFileSync(`${base}.key`, Buffer.from(key, 'base64'), { mode: 0o600 });
  return { certFile: `${base}.crt`, keyFile: `${base}.key` };
}

/** Every host of the class's Ingresses with its paths resolved to endpoints, sorted (a stable nginx.conf). */
async function collect(c: Cluster): Promise<RenderedServer[]> {
  const [ings, svcs, slices] = await Promise.all([
    c.net.listNamespacedIngress({ namespace: c.namespace }),
    c.core.listNamespacedService({ namespace: c.namespace }),
    c.discovery.listNamespacedEndpointSlice({ namespace: c.namespace }),
  ]);
  const servers = new Map<string, RenderedServer>();
  for (const ing of ings.items.filter((i: V1Ingress) => i.spec?.ingressClassName === c.className)) {
    const settings = pathSettings(ing);
    const tls = new Map<string, { certFile: string; keyFile: string }>();
    for (const t of ing.spec?.tls ?? []) {
      const files = t.secretName ? await tlsFiles(c, t.secretName) : undefined;
      if (files) for (const h of t.hosts ?? []) tls.set(h, files);
    }
    for (const rule of ing.spec?.rules ?? []) {
      const host = rule.host ?? '_';
      const server = servers.get(host) ?? { host, paths: [], ...(tls.has(host) ? { tls: tls.get(host)! } : {}) };
      servers.set(host, server);
      for (const p of rule.http?.paths ?? []) {
        const backend = p.backend.service;
        if (backend === undefined) continue;
        const svc = svcs.items.find((s) => s.metadata?.name === backend.name);
        const ref = { ...(backend.port?.name !== undefined ? { name: backend.port.name } : {}), ...(backend.port?.number !== undefined ? { number: backend.port.number } : {}) };
        const upstream = `${c.namespace}-${backend.name}-${ref.name ?? String(ref.number)}`.replace(/[^A-Za-z0-9_-]/g, '_');
        const endpoints = svc ? readyEndpoints(svc, slices.items, ref) : [];
        server.paths.push({ path: p.path ?? '/', pathType: p.pathType as RenderedPath['pathType'], endpoints, upstream, ...settings });
      }
    }
  }
  return [...servers.values()].sort((a, b) => a.host.localeCompare(b.host));
}

/** Starts nginx with `conf` and resolves once it listens (its pid file is written after the sockets are bound). */
async function startNginx(layout: ConfLayout): Promise<ChildProcess> {
  const { dir } = layout;
  const child = spawn(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-g', 'daemon off;'], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
  await waitFor(
    'nginx to listen (its pid file)',
    () => {
      if (child.exitCode !== null) throw new Error(`nginx exited (${child.exitCode}): ${stderr}${readLog(join(dir, 'error.log'))}`);
      return existsSync(join(dir, 'nginx.pid')) ? true : undefined;
    },
    { timeoutMs: 15_000, intervalMs: 50 },
  );
  return child;
}

const readLog = (path: string): string => (existsSync(path) ? readFileSync(path, 'utf8') : '');

/**
 * Creates the IngressClass `className` (controller berth.dev/test-nginx) and serves its Ingresses
 * in `namespace` with nginx until close(). An Ingress created later is picked up by the watches.
 */
export async function startTestIngressController(kc: KubeConfig, opts: { namespace: string; className?: string }): Promise<TestIngressController> {
  const className = opts.className ?? 'berth-test-nginx';
  const dir = mkdtempSync(join(tmpdir(), 'berth-ingress-nginx-'));
  for (const sub of ['certs', 'tmp']) mkdirSync(join(dir, sub), { mode: 0o700 });
  const c: Cluster = { core: kc.makeApiClient(CoreV1Api), net: kc.makeApiClient(NetworkingV1Api), discovery: kc.makeApiClient(DiscoveryV1Api), namespace: opts.namespace, className, dir };
  await c.net.createIngressClass({ body: { metadata: { name: className, labels: { 'berth.dev/test': 'true' } }, spec: { controller: CONTROLLER } } });
  const layout: ConfLayout = { dir, httpPort: await freePort(), httpsPort: await freePort() };
  let nginx: ChildProcess | undefined;
  let loaded = '';
  let loads = 0;
  let closed = false;
  let lastEndpoints: string[] = [];

  const apply = async (): Promise<void> => {
    const servers = await collect(c);
    const conf = renderNginxConf(servers, layout);
    if (closed || conf === loaded) return;
    writeFileSync(join(dir, 'next.conf'), conf);
    await run(NGINX, ['-t', '-q', '-p', dir, '-c', join(dir, 'next.conf'), '-e', join(dir, 'error.log')]);
    renameSync(join(dir, 'next.conf'), join(dir, 'nginx.conf'));
    if (nginx === undefined) nginx = await startNginx(layout);
    else await run(NGINX, ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', join(dir, 'error.log'), '-s', 'reload']);
    loaded = conf;
    loads++;
    lastEndpoints = [...new Set(servers.flatMap((s) => s.paths.flatMap((p) => p.endpoints)))].sort();
    console.log(`[ingress-nginx] configuration ${loads}: ${servers.map((s) => `${s.tls ? 'https' : 'http'}://${s.host} → ${s.paths.map((p) => p.endpoints.join(',') || '503').join('; ')}`).join(', ') || 'no hosts'}`);
  };
  // One sync at a time; events during one ask for another after it (a burst is one or two syncs).
  let chain: Promise<void> = Promise.resolve();
  let queued = false;
  const sync = (): Promise<void> => {
    if (queued) return chain;
    queued = true;
    chain = chain.then(async () => {
      queued = false;
      if (closed) return;
      await apply().catch((err: unknown) => console.error(`[ingress-nginx] sync failed (the next change retries): ${String(err)}`));
    });
    return chain;
  };

  const watch = new Watch(kc);
  const watches: AbortController[] = [];
  const paths = ['/apis/networking.k8s.io/v1', '/api/v1', '/apis/discovery.k8s.io/v1', '/api/v1'].map(
    (group, i) => `${group}/namespaces/${opts.namespace}/${['ingresses', 'services', 'endpointslices', 'secrets'][i]}`,
  );
  const follow = async (path: string): Promise<void> => {
    // Each (re)started watch lists what is there as ADDED events first; an ended one starts again.
    const ctl = await watch.watch(path, { allowWatchBookmarks: false }, () => void sync(), (err: unknown) => {
      if (closed) return;
      // A watch the API server ended is started again (after a failure, a second later).
      const again = (): void => void follow(path).catch((e: unknown) => console.error(`[ingress-nginx] watch ${path} failed: ${String(e)}`));
      if (err) setTimeout(again, 1000).unref();
      else again();
    });
    if (closed) ctl.abort();
    else watches.push(ctl);
  };
  try {
    await Promise.all(paths.map(follow));
    await sync();
    if (nginx === undefined) throw new Error(`nginx did not start (see the sync error above): ${readLog(join(dir, 'error.log')).slice(-2000)}`);
  } catch (err) {
    closed = true;
    for (const w of watches) w.abort();
    await c.net.deleteIngressClass({ name: className }).catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }

  return {
    className,
    httpPort: layout.httpPort,
    httpsPort: layout.httpsPort,
    loads: () => loads,
    accessLog: () => readLog(join(dir, 'access.log')),
    endpoints: () => lastEndpoints,
    async close() {
      closed = true;
      for (const w of watches.splice(0)) w.abort();
      await chain;
      const child = nginx;
      if (child?.pid !== undefined && child.exitCode === null && child.signalCode === null) {
        const exited = new Promise((resolve) => child.once('exit', resolve));
        process.kill(child.pid, 'SIGTERM'); // nginx's fast shutdown: open WebSockets are closed too
        await exited;
      }
      await c.net.deleteIngressClass({ name: className }).catch((err: unknown) => {
        if (!isNotFound(err)) throw err;
      });
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
