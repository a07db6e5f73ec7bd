/**
 * Stage `agentctl_connect` (spec §6): a supervised port-forward to the control port, health polled
 * through it (forwards to a port nobody listens on yet fail per connection, the listener stays),
 * the nonce traded for a token, the instance created (an ambiguous create is reconciled by the
 * client), and its health. An agentctl that serves the instance API on its control port (it says so
 * in its health) is reached through the same forward; an older one through a second forward to the
 * instance port. Also the reconnect of a running Pod: the recorded token first, the recorded nonce
 * only when agentctl restarted.
 * @module
 */
import { ControlClient, isAgentctlHttpError, type FetchLike, type InstanceClient } from '../../../agentctl-client/index.js';
import { AGENTCTL_FEATURES, type HealthResponse } from '../../../protocol/index.js';
import { errorMessage } from '../../../shared/errors.js';
import { LaunchError } from '../../launch-kit/index.js';
import { AGENTCTL_PORT, PATH, STAGE } from '../constants.js';
import type { KubePortForward, PortForwardSession } from '../kube/index.js';

const HEALTH_PROBE_MS = 1500;

interface AgentctlTarget {
  forward: KubePortForward;
  /** agentctl's HTTP, through the forward's loopback listener. */
  fetch: FetchLike;
  namespace: string;
  pod: string;
  instanceId: string;
  /** Env of every process the instance starts (profile + launch env + approved secrets). */
  instanceEnv: Record<string, string>;
  labels: Record<string, string>;
  signal?: AbortSignal;
}

export interface Connected {
  control: ControlClient;
  client: InstanceClient;
  token: string;
  instancePort: number;
  /** The control forward, and the instance's when agentctl is too old to serve it on the control port; closed together by the instance's close(). */
  forwards: PortForwardSession[];
}

function localUrl(f: PortForwardSession): string {
  return `http://${f.localAddress}:${f.localPort}`;
}

/** Opens the control forward and its client (with `token` when one is known). */
async function controlForward(t: AgentctlTarget, token?: string): Promise<{ forward: PortForwardSession; control: ControlClient }> {
  const forward = await t.forward.open({ namespace: t.namespace, pod: t.pod, port: AGENTCTL_PORT });
  const control = new ControlClient({ baseUrl: localUrl(forward), fetch: t.fetch, timeoutMs: 30_000, ...(token !== undefined ? { token } : {}) });
  return { forward, control };
}

/**
 * Polls /health through the forward until agentctl answers (or `failure` / the signal ends the
 * wait). Each probe is one attempt (the client's own retry backoff would sleep 100 ms, then 200 ms,
 * between refused probes while agentctl is a few ms from listening), 25 ms apart for the first
 * second, then backing off to 250 ms.
 */
async function waitControlHealthy(forwardUrl: string, fetch: FetchLike, opts: { signal?: AbortSignal; failure?: Promise<never>; timeoutMs: number }): Promise<HealthResponse> {
  const probe = new ControlClient({ baseUrl: forwardUrl, fetch, timeoutMs: HEALTH_PROBE_MS, retry: { attempts: 1 } });
  const started = Date.now();
  const deadline = started + opts.timeoutMs;
  let last: unknown = null;
  for (;;) {
    opts.signal?.throwIfAborted();
    try {
      return await probe.health({ timeoutMs: HEALTH_PROBE_MS, signal: AbortSignal.timeout(HEALTH_PROBE_MS + 500) });
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new LaunchError(STAGE.agentctlConnect, 'AgentctlUnhealthy', `agentctl did not answer within ${Math.round(opts.timeoutMs / 1000)} s (last error: ${errorMessage(last)})`);
    }
    const delay = Date.now() - started < 1000 ? 25 : 250;
    const pause = new Promise((r) => setTimeout(r, delay));
    await (opts.failure ? Promise.race([pause, opts.failure]) : pause);
  }
}

/**
 * Opens a forward to the control port, waits until agentctl answers its health (no token needed),
 * and closes the forward: a warm pool member is checked this way, with nothing traded.
 */
export async function awaitHealthy(t: Pick<AgentctlTarget, 'forward' | 'fetch' | 'namespace' | 'pod' | 'signal'>, timeoutMs: number, failure?: Promise<never>): Promise<void> {
  const forward = await t.forward.open({ namespace: t.namespace, pod: t.pod, port: AGENTCTL_PORT });
  try {
    await waitControlHealthy(localUrl(forward), t.fetch, { timeoutMs, ...(failure ? { failure } : {}), ...(t.signal ? { signal: t.signal } : {}) });
  } finally {
    await forward.close();
  }
}

/** The control forward when agentctl serves the instance API on it (its health says so), else null. */
function sharedForward(health: HealthResponse, control: PortForwardSession): PortForwardSession | null {
  return health.features?.includes(AGENTCTL_FEATURES.instanceApiOnControl) === true ? control : null;
}

interface OpenedInstance {
  client: InstanceClient;
  port: number;
  /** A forward of the instance's own, when it could not share the control one. */
  forward: PortForwardSession | null;
}

/** Creates the instance (same id on every call) and connects its client. */
async function attachInstance(t: AgentctlTarget, control: ControlClient, shared: PortForwardSession | null): Promise<OpenedInstance> {
  const info = await control.createInstance(
    { id: t.instanceId, workspace_path: PATH.workspace, env: t.instanceEnv, labels: t.labels },
    { ...(t.signal ? { signal: t.signal } : {}) },
  );
  return openInstance(t, control, info, shared);
}

/** The instance's client through `shared` (the control forward), or through a forward of its own; its health answered. */
async function openInstance(t: AgentctlTarget, control: ControlClient, info: { id: string; port: number }, shared: PortForwardSession | null): Promise<OpenedInstance> {
  const own = shared === null ? await t.forward.open({ namespace: t.namespace, pod: t.pod, port: info.port }) : null;
  try {
    const client = control.instance(info, { baseUrl: localUrl(shared ?? (own as PortForwardSession)) });
    await client.health({ ...(t.signal ? { signal: t.signal } : {}) });
    return { client, port: info.port, forward: own };
  } catch (err) {
    await own?.close();
    throw err;
  }
}

/** A control forward opened ahead of its use, agentctl's health answered through it, and the token when the nonce was traded too. */
export interface EarlyControl {
  forward: PortForwardSession;
  control: ControlClient;
  health: HealthResponse;
  token: string | null;
}

/**
 * Opens the control forward and asks agentctl's health through it now, so that the WebSocket the
 * forward carries it on is up by the time the handshake needs it; given `nonce`, trades it too (the
 * token is only ever the caller's: nothing of a session reaches agentctl before the instance is
 * created). The claim of a warm pool member does this while it relabels the member's objects. Null
 * when any of it failed (the connect then opens its own, and a refused nonce fails it there).
 */
export async function earlyControl(t: Pick<AgentctlTarget, 'forward' | 'fetch' | 'namespace' | 'pod' | 'signal'>, nonce?: Promise<string>): Promise<EarlyControl | null> {
  let opened: Omit<EarlyControl, 'health' | 'token'> | null = null;
  try {
    opened = await controlForward(t as AgentctlTarget);
    const sig = t.signal ? { signal: t.signal } : {};
    const health = await opened.control.health({ timeoutMs: HEALTH_PROBE_MS, ...sig });
    const token = nonce === undefined ? null : await opened.control.handshake(await nonce, sig);
    return { ...opened, health, token };
  } catch {
    await opened?.forward.close();
    return null;
  }
}

/** Fresh agentctl (just started with `nonce`): health, handshake, instance. `early`: a control forward already open and answered. */
export async function connectFresh(t: AgentctlTarget, nonce: string, opts: { failure?: Promise<never>; timeoutMs: number; early?: EarlyControl | null }): Promise<Connected> {
  const { forward, control } = opts.early ?? (await controlForward(t));
  const forwards = [forward];
  try {
    const health = opts.early?.health ?? (await waitControlHealthy(localUrl(forward), t.fetch, { ...opts, ...(t.signal ? { signal: t.signal } : {}) }));
    const token = opts.early?.token ?? (await control.handshake(nonce, { ...(t.signal ? { signal: t.signal } : {}) }));
    const inst = await attachInstance(t, control, sharedForward(health, forward));
    if (inst.forward) forwards.push(inst.forward);
    return { control, client: inst.client, token, instancePort: inst.port, forwards };
  } catch (err) {
    await Promise.allSettled(forwards.map((f) => f.close()));
    throw err;
  }
}

/**
 * Reconnects to agentctl in a running Pod: the recorded token on the control API (the instance
 * is re-read, or re-created with the same id if agentctl lost it); when the token is rejected,
 * agentctl restarted (a container restart): it removed its nonce file the first time, so a fresh
 * nonce is written into the Pod (`freshNonce`) and traded. (An agentctl of a Pod bootstrapped
 * before nonce files still has the recorded nonce in its environment: that is tried first.)
 * `restarted` tells which; `nonce`: the nonce traded, to record; `recreated`: the instance had to
 * be created again (its processes are gone either way).
 */
export async function reconnect(
  t: AgentctlTarget,
  secrets: { authToken: string; bootstrapNonce: string },
  opts: { timeoutMs: number; freshNonce: () => Promise<string> },
): Promise<Connected & { restarted: boolean; recreated: boolean; nonce: string }> {
  const { forward, control } = await controlForward(t, secrets.authToken);
  const forwards = [forward];
  try {
    const health = await waitControlHealthy(localUrl(forward), t.fetch, { timeoutMs: opts.timeoutMs, ...(t.signal ? { signal: t.signal } : {}) });
    const shared = sharedForward(health, forward);
    let token = secrets.authToken;
    let nonce = secrets.bootstrapNonce;
    let restarted = false;
    let info: { id: string; port: number } | null = null;
    const sig = t.signal ? { signal: t.signal } : {};
    try {
      info = await control.getInstance(t.instanceId, sig);
    } catch (err) {
      if (isAgentctlHttpError(err) && err.status === 401) {
        try {
          token = await control.handshake(nonce, sig);
        } catch (refused) {
          if (!(isAgentctlHttpError(refused) && refused.status === 403)) throw refused;
          nonce = await opts.freshNonce();
          token = await control.handshake(nonce, sig);
        }
        restarted = true;
      } else if (!(isAgentctlHttpError(err) && err.status === 404)) {
        throw err;
      }
    }
    const inst = info !== null ? await openInstance(t, control, info, shared) : await attachInstance(t, control, shared);
    if (inst.forward) forwards.push(inst.forward);
    return { control, client: inst.client, token, instancePort: inst.port, forwards, restarted, recreated: info === null, nonce };
  } catch (err) {
    await Promise.allSettled(forwards.map((f) => f.close()));
    throw err;
  }
}
