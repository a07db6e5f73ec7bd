/**
 * The part of a launch that brings a new Pod to a connected agentctl — `pod_ready` and `bootstrap`
 * (pod-bootstrap.ts), `agentctl_connect` — shared by a fresh launch and by a replacement Pod (a resume after stop).
 * The Pod monitor runs throughout, so a failure in the Pod ends whichever stage is running; each
 * checkpoint is written inside the stage of its side effect. On failure the monitor and any
 * forward are closed; deleting the Pod is the caller's rollback.
 * @module
 */
import { CHECKPOINT, STAGE } from '../constants.js';
import type { AgentctlDelivery } from '../artifacts.js';
import { connectFresh, type Connected } from './connect.js';
import type { KubeLaunchState } from './context.js';
import { instanceEnv } from './instance.js';
import type { PodMonitor } from './monitor.js';
import { readyAndBootstrap } from './pod-bootstrap.js';

/** How long agentctl may take to answer once the workspace is prepared. */
const CONNECT_TIMEOUT_MS = 60_000;

export interface StartedPod {
  connected: Connected;
  delivery: AgentctlDelivery;
}

export async function startPod(l: KubeLaunchState, opts: { name: string; nonce: string; clone: boolean }): Promise<StartedPod> {
  let monitor: PodMonitor | null = null;
  let connecting: Promise<Connected> | null = null;
  const cancel = new AbortController();
  try {
    const target = {
      client: l.client,
      namespace: l.namespace,
      pod: opts.name,
      instanceId: l.identity.instanceId,
      instanceEnv: instanceEnv(l.req),
      labels: { session_id: l.identity.sessionId, executor: l.identity.executor, profile: l.identity.profile },
    };
    // Connecting starts while prepare.sh still runs (see readyAndBootstrap); it is awaited in its own stage.
    const connect = (m: PodMonitor, stop: AbortSignal): Promise<Connected> => {
      const signal = AbortSignal.any([stop, cancel.signal, ...(l.signal ? [l.signal] : [])]);
      return connectFresh({ ...target, signal }, opts.nonce, { failure: m.failure, timeoutMs: CONNECT_TIMEOUT_MS });
    };
    // A resume or a replacement (no clone) reuses the recorded Pod name.
    const pod = await readyAndBootstrap(l, { ...opts, connect });
    monitor = pod.monitor;
    const { delivery } = pod;
    const m = monitor;
    m.stage = STAGE.agentctlConnect;
    const c = await l.stage(STAGE.agentctlConnect, async () => {
      connecting = pod.connecting ?? connect(m, cancel.signal);
      const connected = await Promise.race([connecting, m.failure]);
      l.meta = { ...l.meta, remotePort: connected.instancePort, restartCount: m.restartCount };
      await l.checkpoint(CHECKPOINT.agentctlConnected);
      return connected;
    });
    return { connected: c, delivery };
  } catch (err) {
    // a connect still running is cut short, and its forwards close once it settles (not awaited:
    // a step that ignores the abort must not hold up the rollback, or a stop waiting for it)
    cancel.abort();
    void (connecting as Promise<Connected> | null)?.then(
      (open) => Promise.allSettled(open.forwards.map((f) => f.close())),
      () => undefined,
    );
    throw err;
  } finally {
    monitor?.close();
  }
}
