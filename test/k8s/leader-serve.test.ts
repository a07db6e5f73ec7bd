/**
 * Two `berth serve` replicas sharing a real Postgres inventory, electing a leader through a real
 * Lease on the test cluster (serve --lease, as the chart's Postgres store runs them): one leads and
 * serves, the other is a standby (`/readyz` 503). The leader is killed (SIGKILL) with a ready
 * session, repeatedly: the standby takes over once the Lease lapses, reconnects the session
 * without re-running its agent, and serves it; the killed one comes back as the standby. A leader
 * killed mid-launch leaves a session the new leader finishes or rolls back, and nothing leaks. The
 * replicas run as a ServiceAccount with deploy/rbac.yaml and get/create/update on leases, nothing more.
 * Takeover times are printed (no timing assertions: they depend on the Lease durations).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BerthClient } from '../../src/api/api-client.js';
import type { SessionView } from '../../src/controller/service.js';
import { startPostgres, type TestPostgres } from '../support/postgres.js';
import { CLI, ensureBuilt, ROOT } from '../integration/cli/helpers.js';
import { ensureArtifacts, FAST_AGENT_ENV, imageTemplate, labelledLeftovers, writeClusterConfig } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { createTestRepo, type TestRepo } from './support/git.js';
import { loadKubeConfig } from './support/kube.js';
import { createTestNamespace, type TestNamespace } from './support/namespace.js';
import { createExecutorServiceAccount, type ServiceAccountAccess } from './support/service-account.js';

const env = clusterEnv();
/** Lease 4 s, renew deadline 3 s, retry 1 s: short, so the kills below take seconds, not minutes. */
const TIMINGS = '4000,3000,1000';
const KILLS = 5;

interface Replica {
  name: string;
  child: ChildProcess;
  port: number;
  client: BerthClient;
  out: () => string;
}

describe('two berth serve replicas on Postgres, one Lease', () => {
  let ns: TestNamespace;
  let sa: ServiceAccountAccess;
  let core: CoreV1Api;
  let repo: TestRepo;
  let pg: TestPostgres;
  let work: string;
  const token = randomBytes(32).toString('base64url');
  const replicas = new Map<string, Replica>();

  async function startReplica(name: string): Promise<Replica> {
    const dataDir = join(work, name);
    const args = ['--data-dir', dataDir, '--config', join(work, 'berth.yaml'), 'serve', '--port', '0', '--token-file', join(work, 'token'), '--lease', 'berth-controller'];
    const child = spawn(process.execPath, [CLI, ...args], {
      cwd: ROOT,
      env: {
        ...process.env,
        KUBECONFIG: sa.kubeconfigPath, // the Lease with the ServiceAccount's rights, not the admin's
        BERTH_LOG_LEVEL: 'info',
        BERTH_DATABASE_URL: pg.url('berth'),
        BERTH_SECRET_KEY: randomKey,
        POD_NAMESPACE: ns.name,
        POD_NAME: name,
        BERTH_LEASE_TIMINGS: TIMINGS,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    const port = await new Promise<number>((resolve, reject) => {
      const check = (d: Buffer): void => {
        out += d.toString();
        const m = /listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(out);
        if (m) resolve(Number(m[1]));
      };
      child.stdout?.on('data', check);
      child.stderr?.on('data', check);
      child.once('exit', (code) => reject(new Error(`berth serve ${name} exited with ${code}:\n${out.slice(-3000)}`)));
    });
    const r: Replica = { name, child, port, client: new BerthClient({ baseUrl: `http://127.0.0.1:${port}`, token }), out: () => out };
    replicas.set(name, r);
    return r;
  }

  let randomKey = '';

  async function readyz(r: Replica): Promise<{ status: number; reason?: string }> {
    const res = await fetch(`http://127.0.0.1:${r.port}/readyz`);
    const body = (await res.json()) as { reason?: string };
    return { status: res.status, ...(body.reason !== undefined ? { reason: body.reason } : {}) };
  }

  /** Polls `/readyz` until `want` (the replica's own answer, not a timer). */
  async function until(r: Replica, want: (s: { status: number; reason?: string }) => boolean, what: string, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const s = await readyz(r).catch(() => ({ status: 0 }));
      if (want(s)) return;
      if (Date.now() > deadline) throw new Error(`${r.name}: not ${what} after ${timeoutMs} ms (last /readyz ${JSON.stringify(s)}); its log:\n${r.out().slice(-3000)}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  async function kill(r: Replica): Promise<void> {
    const exited = new Promise<void>((resolve) => r.child.once('exit', () => resolve()));
    if (r.child.pid !== undefined) process.kill(r.child.pid, 'SIGKILL');
    await exited;
    replicas.delete(r.name);
  }

  async function settled(client: BerthClient, id: string, timeoutMs = 180_000): Promise<SessionView> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = await client.get(id);
      if (v.state !== 'launching' && v.state !== 'stopping' && v.state !== 'removing') return v;
      if (Date.now() > deadline) throw new Error(`session ${id} still ${v.state} after ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  async function catMarker(client: BerthClient, id: string): Promise<string> {
    let stdout = '';
    const dec = new TextDecoder();
    await client.exec(id, { argv: ['cat', 'BERTH_MARKER'] }, { onOutput: (c) => (stdout += c.stream === 'stdout' ? dec.decode(c.data) : '') });
    return stdout;
  }

  beforeAll(async () => {
    ensureBuilt();
    ensureArtifacts();
    const admin = loadKubeConfig(env.kubeconfig);
    ns = await createTestNamespace(admin, 'leader-serve', { podSecurity: 'restricted' });
    // the replicas run as a ServiceAccount with deploy/rbac.yaml plus exactly what --lease needs (the README's rule)
    sa = await createExecutorServiceAccount(admin, ns.name, { extraRules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }] });
    core = admin.makeApiClient(CoreV1Api);
    repo = await createTestRepo('leader', { 'README.md': '# leader\n', BERTH_MARKER: 'marker-leader\n' });
    pg = await startPostgres();
    await pg.createDatabase('berth');
    work = mkdtempSync(join(tmpdir(), 'berth-leader-serve-'));
    randomKey = randomBytes(32).toString('base64');
    writeFileSync(join(work, 'token'), `${token}\n`, { mode: 0o600 });
    writeClusterConfig(work, sa, {
      prefix: 'leader',
      profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
      agents: { fast: { command: ['{{agentctl}}', 'demo-agent'], env: FAST_AGENT_ENV } },
    });
    const config = JSON.parse(readFileSync(join(work, 'berth.yaml'), 'utf8')) as Record<string, unknown>;
    writeFileSync(join(work, 'berth.yaml'), JSON.stringify({ ...config, store: { backend: 'postgres' } }));
  });

  afterAll(async () => {
    for (const r of [...replicas.values()]) await kill(r).catch(() => undefined);
    const left = ns ? await labelledLeftovers(core, ns.name) : [];
    await pg?.close();
    await sa?.cleanup().catch(() => undefined);
    await ns?.cleanup();
    await repo?.remove();
    if (work) rmSync(work, { recursive: true, force: true });
    expect(left, 'nothing Berth created is left').toEqual([]);
  });

  it('one leads, the other stands by; a killed leader is replaced by the standby, which reconnects the session without re-running its agent', async () => {
    // a retry starts clean: the replicas of a failed attempt stopped (a paused one too), its sessions removed
    for (const r of [...replicas.values()]) await kill(r);
    const a = await startReplica('berth-a');
    await until(a, (s) => s.status === 200, 'ready (leading)');
    for (const s of await a.client.list()) await a.client.remove(s.id);
    const b = await startReplica('berth-b');
    await until(b, (s) => s.status === 503 && s.reason === 'standby', 'a standby');

    const launched = await a.client.launch({ repository: { url: repo.url }, executor: 'k8s', agent: 'fast', name: `survivor-${randomBytes(3).toString('hex')}` });
    const ready = await settled(a.client, launched.id);
    expect(ready.state, JSON.stringify(ready.error)).toBe('ready');
    const agentId = ready.agentProcess?.id;
    expect(agentId).toBeDefined();

    const takeovers: number[] = [];
    let leader = a;
    let standby = b;
    for (let k = 0; k < KILLS; k++) {
      const t0 = performance.now();
      await kill(leader);
      await until(standby, (s) => s.status === 200, 'ready after the leader was killed');
      takeovers.push(performance.now() - t0);
      const view = await settled(standby.client, launched.id);
      expect(view.state, `after kill ${k + 1}: ${JSON.stringify(view.error)}`).toBe('ready');
      expect(view.agentProcess?.id, 'the agent was not run again').toBe(agentId);
      expect(await catMarker(standby.client, launched.id)).toBe('marker-leader\n');
      const revived = await startReplica(leader.name);
      await until(revived, (s) => s.status === 503 && s.reason === 'standby', 'a standby again');
      [leader, standby] = [standby, revived];
    }
    const sorted = [...takeovers].sort((x, y) => x - y);
    console.log(`[leader] takeover after SIGKILL of the leader (lease 4 s): ${takeovers.map((t) => Math.round(t)).join(', ')} ms; p50 ${Math.round(sorted[Math.floor(sorted.length / 2)]!)} ms, max ${Math.round(sorted.at(-1)!)} ms`);

    const metrics = await (await fetch(`http://127.0.0.1:${leader.port}/metrics`)).text();
    expect(metrics).toMatch(/^berth_leader 1$/m);
    expect(metrics).toMatch(/berth_store_operation_duration_seconds_count\{backend="postgres",op="upsertRuntime",outcome="ok"\} \d+/);
    const standbyMetrics = await (await fetch(`http://127.0.0.1:${standby.port}/metrics`)).text();
    expect(standbyMetrics).toMatch(/^berth_leader 0$/m);

    // paused (SIGSTOP: a stalled process, a frozen VM) past its Lease: the standby takes over; the old
    // leader, resumed, finds its term over, stops and exits (it never acts beside the new leader)
    const paused = leader;
    const exitCode = new Promise<number | null>((resolve) => paused.child.once('exit', (code) => resolve(code)));
    process.kill(paused.child.pid!, 'SIGSTOP');
    await until(standby, (s) => s.status === 200, 'ready while the leader is paused');
    process.kill(paused.child.pid!, 'SIGCONT');
    expect(await exitCode, `the resumed old leader exits to rejoin as a standby; its log:\n${paused.out().slice(-2000)}`).not.toBe(0);
    expect(paused.out()).toContain('lost the controller Lease');
    replicas.delete(paused.name);
    expect((await settled(standby.client, launched.id)).agentProcess?.id, 'the agent was not run again').toBe(agentId);
    [leader, standby] = [standby, await startReplica(paused.name)];
    await until(standby, (s) => s.status === 503 && s.reason === 'standby', 'a standby after its restart');

    // a graceful stop (SIGTERM, as a rollout does): the controller stops, then hands the Lease over at once
    const t1 = performance.now();
    const stopping = leader;
    const stopped = new Promise<number | null>((resolve) => stopping.child.once('exit', (code) => resolve(code)));
    process.kill(stopping.child.pid!, 'SIGTERM');
    await until(standby, (s) => s.status === 200, 'ready after the leader stopped');
    console.log(`[leader] takeover after SIGTERM of the leader (released Lease): ${Math.round(performance.now() - t1)} ms`);
    expect(await stopped).toBe(0);
    replicas.delete(stopping.name);
    [leader, standby] = [standby, await startReplica(stopping.name)];
    await until(standby, (s) => s.status === 503 && s.reason === 'standby', 'a standby after its restart');

    // killed mid-launch: the next leader finishes the launch's cleanup or leaves it ready; either way one Pod at most, all recorded
    const second = await leader.client.launch({ repository: { url: repo.url }, executor: 'k8s', agent: 'fast', name: `mid-launch-${randomBytes(3).toString('hex')}` });
    await kill(leader);
    await until(standby, (s) => s.status === 200, 'ready after a mid-launch kill');
    const after = await settled(standby.client, second.id);
    expect(['ready', 'failed']).toContain(after.state);
    if (after.state === 'failed') expect((await standby.client.resume(second.id)).state).toBe('ready');
    expect(await catMarker(standby.client, second.id)).toBe('marker-leader\n');

    for (const id of [launched.id, second.id]) await standby.client.remove(id);
    expect(await standby.client.list()).toEqual([]);
    expect(await labelledLeftovers(core, ns.name)).toEqual([]);
  });
});
