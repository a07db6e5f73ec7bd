/**
 * A session service holding one Kubernetes session whose launch the test plays step by step (the
 * stage records and events the Kubernetes executor produces: waits for volume binding, scheduling,
 * the image pull, then a failed bootstrap), so the dashboard's waterfall is tested without a cluster.
 * The real cluster's reasons are covered by test/k8s; this is only what the page makes of them.
 * @module
 */
import {
  SessionNotFoundError,
  type LaunchRequest,
  type OutputChunkView,
  type SessionEvent,
  type SessionService,
  type SessionView,
  type ShellSession,
  type StageRecord,
} from '../../../src/controller/service.js';

const ID = 'kube-fixture-1';

export class KubeFixture implements SessionService {
  readonly #listeners = new Set<{ fn: (e: SessionEvent) => void; sessionId?: string }>();
  readonly #t0 = Date.now() - 5_000;
  readonly view: SessionView;

  constructor() {
    const at = (ms: number): string => new Date(this.#t0 + ms).toISOString();
    this.view = {
      id: ID,
      name: 'kube-waterfall',
      executor: 'k8s-small',
      agent: 'demo',
      repository: { url: 'https://git.example.com/app.git', branch: 'main' },
      state: 'launching',
      createdAt: at(0),
      updatedAt: at(0),
      workspacePath: '/workspace',
      error: null,
      agentProcess: null,
      stages: [
        {
          name: 'storage',
          status: 'succeeded',
          startedAt: at(0),
          endedAt: at(420),
          durationMs: 420,
          reason: null,
          message: null,
          waits: [{ at: at(30), reason: 'WaitForFirstConsumer', message: 'waiting for first consumer to be created before binding' }],
        },
        {
          name: 'pod_ready',
          status: 'waiting',
          startedAt: at(420),
          endedAt: null,
          durationMs: null,
          reason: 'ErrImagePull',
          message: 'pulling "registry.example/agent:1": dial tcp: lookup registry.example: no such host',
          waits: [
            { at: at(500), reason: 'FailedScheduling', message: '0/1 nodes are available: 1 Insufficient cpu.' },
            { at: at(2100), reason: 'Scheduled', message: 'Successfully assigned berth/berth-kube-1 to node-1' },
            { at: at(2300), reason: 'Pulling', message: 'Pulling image "registry.example/agent:1"' },
          ],
        },
      ],
    };
  }

  /** The image arrives: pod_ready succeeds and bootstrap starts. */
  podReady(): void {
    const now = new Date().toISOString();
    const pod = this.#stage('pod_ready');
    Object.assign(pod, { status: 'succeeded', endedAt: now, durationMs: Date.parse(now) - Date.parse(pod.startedAt), reason: null, message: null });
    pod.waits?.push({ at: now, reason: 'Pulled', message: 'Successfully pulled image "registry.example/agent:1"' });
    this.#emitStage(pod);
    const boot: StageRecord = { name: 'bootstrap', status: 'running', startedAt: now, endedAt: null, durationMs: null, reason: null, message: null, waits: [] };
    this.view.stages.push(boot);
    this.#emitStage(boot);
  }

  /** The setup script fails: bootstrap fails, the session is failed. */
  bootstrapFails(): void {
    const now = new Date().toISOString();
    const boot = this.#stage('bootstrap');
    Object.assign(boot, { status: 'failed', endedAt: now, durationMs: Date.parse(now) - Date.parse(boot.startedAt), reason: 'PrepareFailed', message: 'setup_script exited with code 7: npm ERR! missing script: setup' });
    this.#emitStage(boot);
    this.view.state = 'failed';
    this.view.error = { message: 'bootstrap failed: setup_script exited with code 7', stage: 'bootstrap' };
    this.#emit({ type: 'state', sessionId: ID, state: 'failed', error: this.view.error, at: now });
  }

  #stage(name: string): StageRecord {
    const s = this.view.stages.find((x) => x.name === name);
    if (!s) throw new Error(`no stage ${name}`);
    return s;
  }

  #emitStage(stage: StageRecord): void {
    this.view.updatedAt = new Date().toISOString();
    this.#emit({ type: 'stage', sessionId: ID, stage: structuredClone(stage), at: this.view.updatedAt });
  }

  #emit(e: SessionEvent): void {
    for (const l of this.#listeners) if (l.sessionId === undefined || l.sessionId === e.sessionId) l.fn(e);
  }

  #check(id: string): void {
    if (id !== ID) throw new SessionNotFoundError(id);
  }

  async launch(_req: LaunchRequest): Promise<SessionView> {
    throw new Error('the fixture does not launch');
  }
  async list(): Promise<SessionView[]> {
    return [structuredClone(this.view)];
  }
  async get(id: string): Promise<SessionView> {
    this.#check(id);
    return structuredClone(this.view);
  }
  async stop(id: string): Promise<SessionView> {
    return this.get(id);
  }
  async resume(id: string): Promise<SessionView> {
    return this.get(id);
  }
  async remove(id: string): Promise<void> {
    this.#check(id);
  }
  async exec(id: string, _argv: string[]): Promise<{ exitCode: number | null; signal: string | null }> {
    this.#check(id);
    return { exitCode: 1, signal: null };
  }
  async openShell(id: string): Promise<ShellSession> {
    this.#check(id);
    throw new Error('the fixture has no shell');
  }
  logs(id: string): AsyncIterable<OutputChunkView> {
    this.#check(id);
    return (async function* () {})();
  }
  subscribe(listener: (event: SessionEvent) => void, filter?: { sessionId?: string }): () => void {
    const entry = { fn: listener, ...(filter?.sessionId !== undefined ? { sessionId: filter.sessionId } : {}) };
    this.#listeners.add(entry);
    return () => this.#listeners.delete(entry);
  }
  async close(): Promise<void> {
    this.#listeners.clear();
  }
}
