/**
 * Test support (never imported by shipped code): recording fakes of the exec and port-forward
 * ports (kube/ports.ts) and an in-process stand-in for the agentctl in each Pod, reached through
 * the fake forwards' loopback ports by a `fetch` (no socket is opened). The exec fake answers like
 * an image with Node and runs the bootstrap, the nonce delivery and the cleanup script as no-ops
 * that succeed; {@link FakeExec.handle} replaces that per call.
 * @module
 */
import type { FetchLike } from '../../../agentctl-client/index.js';
import { AGENTCTL_FEATURES } from '../../../protocol/index.js';
import { AGENTCTL_STARTING_LINE, PROBE_SCRIPT } from '../compose/index.js';
import { AGENTCTL_PORT, PATH } from '../constants.js';
import { FORWARD_LOCAL_ADDRESS, KubeExecError, type ExecOptions, type ExecResult, type ForwardTarget, type KubeExec, type KubePortForward, type PortForwardSession } from '../kube/index.js';
import type { FakeKubeObjects } from './fake-kube.js';

/** What an exec runs, told by its script. */
type ExecKind = 'probe' | 'bootstrap' | 'nonce' | 'cleanup';

interface ExecCall {
  kind: ExecKind;
  namespace: string;
  pod: string;
  /** The UID of the Pod the exec landed in (undefined: no such Pod). */
  podUid: string | undefined;
  container: string;
  command: readonly string[];
}

/** An exec's answer: its result, or a KubeExecError to throw. */
type ExecAnswer = Partial<ExecResult> | KubeExecError;

function kindOf(command: readonly string[]): ExecKind {
  const script = command[2] ?? '';
  if (script === PROBE_SCRIPT) return 'probe';
  if (script.includes(`${PATH.nonceFile}.new`)) return 'nonce';
  if (script.startsWith(`export HOME=${PATH.home}`)) return 'cleanup';
  return 'bootstrap';
}

async function stdinText(stdin: ExecOptions['stdin']): Promise<string> {
  if (stdin === undefined) return '';
  if (Buffer.isBuffer(stdin)) return stdin.toString('utf8');
  const chunks: Buffer[] = [];
  for await (const c of stdin as AsyncIterable<Buffer>) chunks.push(Buffer.from(c));
  return Buffer.concat(chunks).toString('utf8');
}

export class FakeExec implements KubeExec {
  readonly calls: ExecCall[] = [];
  /** Answers an exec before the default does; return undefined to let the default answer. */
  handle: (call: ExecCall) => ExecAnswer | undefined | Promise<ExecAnswer | undefined> = () => undefined;
  readonly #objects: FakeKubeObjects;
  readonly #agentctl: FakeAgentctl;

  constructor(objects: FakeKubeObjects, agentctl: FakeAgentctl) {
    this.#objects = objects;
    this.#agentctl = agentctl;
  }

  callsOf(kind: ExecKind): ExecCall[] {
    return this.calls.filter((c) => c.kind === kind);
  }

  async exec(opts: ExecOptions): Promise<ExecResult> {
    const pod = this.#objects.find('Pod', opts.namespace, opts.pod);
    const call: ExecCall = { kind: kindOf(opts.command), namespace: opts.namespace, pod: opts.pod, podUid: pod?.metadata?.uid, container: opts.container, command: [...opts.command] };
    this.calls.push(call);
    await Promise.resolve();
    if (pod === undefined) throw new KubeExecError(`pods "${opts.pod}" not found`, { kind: 'refused', status: 404, reason: 'NotFound' });
    if (!pod.spec?.nodeName) throw new KubeExecError(`pod ${opts.pod} does not have a host assigned`, { kind: 'unavailable', status: 400 });
    const answer = (await this.handle(call)) ?? (await this.#default(call, opts));
    if (answer instanceof KubeExecError) throw answer;
    const stdout = answer.stdout ?? '';
    if (stdout !== '') {
      opts.onFirstStdout?.();
      opts.onStdout?.(Buffer.from(stdout));
    }
    const exitCode = answer.exitCode ?? 0;
    return { exitCode, signal: null, stdout, stderr: answer.stderr ?? '', stdoutTruncated: false, stderrTruncated: false, ...answer };
  }

  async #default(call: ExecCall, opts: ExecOptions): Promise<ExecAnswer> {
    switch (call.kind) {
      case 'probe':
        return { stdout: 'node=v22.0.0\narch=unknown\ngzip=no\n' };
      case 'nonce':
        this.#agentctl.deliverNonce(call.podUid ?? '', (await stdinText(opts.stdin)).trim());
        return {};
      case 'bootstrap':
        return { stdout: `.${AGENTCTL_STARTING_LINE}\n` };
      case 'cleanup':
        return {};
    }
  }
}

/** The state of the agentctl in one Pod (by the Pod's UID). */
interface Agent {
  tokens: Set<string>;
  /** Nonces already traded (a replay is refused). */
  used: Set<string>;
  /** After a restart: the only nonce it accepts (null: any fresh one, as on its first start). */
  expected: string | null;
  instances: Map<string, { id: string; port: number; workspace_path: string; labels: Record<string, string> }>;
}

interface ForwardCall {
  target: ForwardTarget;
  localPort: number;
}

/** Answers agentctl's HTTP API for a request, before the stand-in does; undefined: let it answer. */
type AgentctlHook = (req: { podUid: string; port: number; method: string; path: string; body: unknown }) => { status: number; body?: unknown } | undefined;

/**
 * The fake port-forward and the agentctl of every Pod behind it. `fetch` routes a request to the
 * forward's Pod (by its current UID) and port; a closed forward refuses connections.
 */
export class FakeAgentctl implements KubePortForward {
  readonly forwards: ForwardCall[] = [];
  /** Every handshake, with the nonce offered. */
  readonly handshakes: { podUid: string; nonce: string; accepted: boolean }[] = [];
  /** Every request that reached an agentctl, as `METHOD path`. */
  readonly requests: string[] = [];
  hook: AgentctlHook = () => undefined;
  /** What the agentctls announce in their control health (today's build: the instance API on the control port; [] for an older one). */
  features: string[] = [AGENTCTL_FEATURES.instanceApiOnControl];
  readonly #objects: FakeKubeObjects;
  readonly #agents = new Map<string, Agent>();
  readonly #open = new Map<number, ForwardTarget>();
  #nextPort = 50_000;
  #tokens = 0;

  constructor(objects: FakeKubeObjects) {
    this.#objects = objects;
  }

  /** The forwards still open. */
  get openForwards(): number {
    return this.#open.size;
  }

  open(target: ForwardTarget): Promise<PortForwardSession> {
    const localPort = this.#nextPort++;
    this.forwards.push({ target: { ...target }, localPort });
    this.#open.set(localPort, { ...target });
    let closed = false;
    return Promise.resolve({
      localAddress: FORWARD_LOCAL_ADDRESS,
      localPort,
      target: { ...target },
      stats: () => ({ accepted: 0, active: 0, failures: 0 }),
      close: () => {
        if (!closed) this.#open.delete(localPort);
        closed = true;
        return Promise.resolve();
      },
    });
  }

  /** A container restart: agentctl forgets its tokens and instances; its nonce file is gone. */
  restart(podUid: string): void {
    this.#agents.set(podUid, { ...this.#agent(podUid), tokens: new Set(), instances: new Map(), expected: '' });
  }

  /** A token the agentctl of `podUid` accepts (a session recorded before the test). */
  grantToken(podUid: string, token: string, instance?: { id: string; port: number }): void {
    const a = this.#agent(podUid);
    a.tokens.add(token);
    if (instance) a.instances.set(instance.id, { ...instance, workspace_path: PATH.workspace, labels: {} });
  }

  /** The nonce written into the Pod by a nonce delivery. */
  deliverNonce(podUid: string, nonce: string): void {
    this.#agent(podUid).expected = nonce;
  }

  readonly fetch: FetchLike = async (url, init) => {
    const u = new URL(url);
    const target = this.#open.get(Number(u.port));
    if (target === undefined) throw new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } });
    const podUid = this.#objects.find('Pod', target.namespace, target.pod)?.metadata?.uid;
    if (podUid === undefined) throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
    const body: unknown = typeof init.body === 'string' ? JSON.parse(init.body) : undefined;
    const method = init.method ?? 'GET';
    this.requests.push(`${method} ${u.pathname}`);
    const auth = new Headers(init.headers).get('authorization')?.replace(/^Bearer /, '');
    const answer = this.hook({ podUid, port: target.port, method, path: u.pathname, body }) ?? this.#answer(this.#agent(podUid), podUid, target.port, method, u.pathname, body, auth);
    return response(answer.status, answer.body);
  };

  #agent(podUid: string): Agent {
    let a = this.#agents.get(podUid);
    if (a === undefined) {
      a = { tokens: new Set(), used: new Set(), expected: null, instances: new Map() };
      this.#agents.set(podUid, a);
    }
    return a;
  }

  #answer(a: Agent, podUid: string, port: number, method: string, path: string, body: unknown, auth: string | undefined): { status: number; body?: unknown } {
    if (path === '/health') return { status: 200, body: { status: 'ok', version: 'fake', features: this.features } };
    if (port !== AGENTCTL_PORT) return { status: 404, body: error('not_found', 'no such route') };
    if (method === 'POST' && path === '/auth/handshake') {
      const nonce = (body as { nonce: string }).nonce;
      const accepted = !a.used.has(nonce) && (a.expected === null || a.expected === nonce);
      this.handshakes.push({ podUid, nonce, accepted });
      if (!accepted) return { status: 403, body: error('forbidden', 'nonce refused') };
      a.used.add(nonce);
      a.expected = '';
      const token = `token-${++this.#tokens}-${'x'.repeat(32)}`;
      a.tokens.add(token);
      return { status: 200, body: { token } };
    }
    if (auth === undefined || !a.tokens.has(auth)) return { status: 401, body: error('unauthorized', 'bad token') };
    const id = decodeURIComponent(path.replace(/^\/api\/v1\/instances\/?/, ''));
    if (method === 'POST' && id === '') {
      const req = body as { id: string; workspace_path: string; labels: Record<string, string> };
      const info = { id: req.id, port: 41_001, workspace_path: req.workspace_path, labels: req.labels };
      a.instances.set(req.id, info);
      return { status: 201, body: full(info) };
    }
    const info = a.instances.get(id);
    if (info === undefined) return { status: 404, body: error('not_found', `no instance ${id}`) };
    if (method === 'DELETE') {
      a.instances.delete(id);
      return { status: 204 };
    }
    return { status: 200, body: full(info) };
  }
}

function full(info: { id: string; port: number; workspace_path: string; labels: Record<string, string> }): unknown {
  return { ...info, status: 'running', created_at: new Date(0).toISOString() };
}

function error(code: string, message: string): unknown {
  return { error: { code, message } };
}

function response(status: number, body: unknown): Awaited<ReturnType<FetchLike>> {
  return { ok: status >= 200 && status < 300, status, text: () => Promise.resolve(body === undefined ? '' : JSON.stringify(body)) };
}
