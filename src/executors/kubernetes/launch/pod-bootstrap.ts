/**
 * Stages `pod_ready` and `bootstrap` of a new Pod, with the image probe remembered per image.
 *
 * The first launch of an image (with that container env) probes it (pod-ready.ts), then uploads. Later launches of the same
 * image skip the probe: the bootstrap exec, led by the probe's guard, is the first exec tried, so
 * it starts the moment the container can run one, one exec round trip sooner. `pod_ready` ends when
 * that exec runs; `bootstrap` waits for its end. Should the image have changed under its name (the
 * guard exits {@link EXIT_PROBE_MISMATCH} before reading anything), it is probed again and the
 * bootstrap sent as on a first launch. A launch that fails after using a remembered probe forgets
 * it, whatever the cause: the next one probes again.
 *
 * A local-path repository (its git bundle is made on this machine first) always probes first.
 * @module
 */
import { CHECKPOINT, STAGE } from '../constants.js';
import type { AgentctlDelivery } from '../artifacts.js';
import { probeGuard, type ProbeResult } from '../compose/index.js';
import type { ExecResult } from '../kube/index.js';
import { bootstrapExecs, bootstrapPod, ProbeMismatchError, runBootstrap, type BootstrapExec } from './bootstrap.js';
import type { Connected } from './connect.js';
import type { KubeLaunchState } from './context.js';
import type { PodMonitor } from './monitor.js';
import { BootstrapProgress } from './bootstrap-progress.js';
import { createReadyPod, probeUntilReady } from './pod-ready.js';

/**
 * What the probe of a main container depends on: its image reference and its env (a PATH without
 * Node turns the same image into one for the SEA build).
 */
function probeKey(l: KubeLaunchState): string | undefined {
  const main = l.mainContainer;
  return main?.image === undefined ? undefined : JSON.stringify([main.image, main.env ?? []]);
}

export interface BootstrappedPod {
  monitor: PodMonitor;
  delivery: AgentctlDelivery;
  /** The connect started by `opts.connect` as soon as the start marker was written; null without one. */
  connecting: Promise<Connected> | null;
}

interface Early {
  execs: BootstrapExec[];
  done: Promise<ExecResult>;
}

/**
 * Creates the Pod, waits until it takes an exec and bootstraps it; the caller closes the monitor.
 * `connect` (agentctl_connect) is started the moment the bootstrap exec says it wrote the start
 * marker, so the forward, the handshake and the instance create overlap prepare.sh (the clone): it
 * needs nothing of the workspace but that its mount exists, and the agent starts only after.
 */
export async function readyAndBootstrap(
  l: KubeLaunchState,
  opts: { name: string; nonce: string; clone: boolean; connect?: (monitor: PodMonitor, signal: AbortSignal) => Promise<Connected> },
): Promise<BootstrappedPod> {
  const key = probeKey(l);
  let markerWritten!: () => void;
  const written = new Promise<void>((resolve) => (markerWritten = resolve));
  const onAgentctlStarting = opts.connect === undefined ? undefined : markerWritten;
  let connecting: Promise<Connected> | null = null;
  const cancelConnect = new AbortController();
  const remembered = key === undefined || l.req.repository.path !== undefined ? undefined : l.env.probes.get(key);
  // A replacement's name was an earlier Pod's, whose containers may still run (see createReadyPod);
  // not after a stop that saw that Pod gone with them (a resume).
  const reusedName = !opts.clone && !l.meta.podReclaimed;
  let monitor: PodMonitor | null = null;
  // made now: an exec started while the Pod comes up already reports its steps to it
  const progress = new BootstrapProgress({
    budgets: l.profile.budgets,
    timeoutsPath: `profiles.${l.identity.profile}.kubernetes.timeouts`,
    report: (reason, message) => l.report({ stage: STAGE.bootstrap, status: 'waiting', reason, message }),
  });
  try {
    let delivery: AgentctlDelivery;
    let early: Early | null = null;
    let gzip: boolean;
    if (remembered !== undefined) {
      gzip = remembered.gzip;
      delivery = deliveryFor(l, remembered);
      const d = delivery;
      const ready = await l.stage(STAGE.podReady, async () => {
        const execs = await bootstrapExecs(l, {
          nonce: opts.nonce,
          delivery: d,
          clone: opts.clone,
          compress: remembered.gzip,
          guard: probeGuard(remembered),
          progress,
          ...(onAgentctlStarting ? { onAgentctlStarting } : {}),
        });
        const [first] = execs;
        if (first === undefined) throw new Error('the bootstrap has no exec');
        return { ...(await createReadyPod(l, opts.name, { reusedName, first })), execs };
      });
      monitor = ready.monitor;
      if (ready.first !== null) early = { execs: ready.execs, done: ready.first };
    } else {
      const ready = await l.stage(STAGE.podReady, () => createReadyPod(l, opts.name, { reusedName }));
      monitor = ready.monitor;
      const probe = ready.probe as ProbeResult;
      if (key !== undefined) l.env.probes.set(key, probe);
      delivery = deliveryFor(l, probe);
      gzip = probe.gzip;
    }
    const m = monitor;
    m.endBudgets();
    m.stage = STAGE.bootstrap;
    if (opts.connect !== undefined) {
      const connect = opts.connect;
      connecting = written.then(() => connect(m, cancelConnect.signal));
      connecting.catch(() => undefined); // awaited by the caller; until then a failure must not go unhandled
    }
    await l.stage(STAGE.bootstrap, async () => {
      const options = { ...opts, reusedName, progress, ...(onAgentctlStarting ? { onAgentctlStarting } : {}) };
      progress.start();
      try {
        delivery = await Promise.race([bootstrap(l, m, options, { delivery, gzip }, early, key), m.failure, progress.expired]);
      } finally {
        progress.stop();
      }
      await l.checkpoint(CHECKPOINT.bootstrapped);
    });
    markerWritten(); // (the line cannot have been missed, as the exec exits 0 after it; should it be, connect now)
    return { monitor: m, delivery, connecting };
  } catch (err) {
    progress.stop();
    monitor?.close();
    // a connect started during the bootstrap is cut short and closes its forwards
    cancelConnect.abort();
    void connecting?.then(
      (c) => Promise.allSettled(c.forwards.map((f) => f.close())),
      () => undefined,
    );
    if (remembered !== undefined && key !== undefined) l.env.probes.delete(key);
    throw err;
  }
}

function deliveryFor(l: KubeLaunchState, probe: ProbeResult): AgentctlDelivery {
  const delivery = l.env.artifacts.delivery(probe.flavor, l.profile.platform, probe);
  l.meta = { ...l.meta, agentctlFlavor: delivery.flavor };
  return delivery;
}

/** The bootstrap, finishing an early first exec when there is one; returns the delivery it used. */
async function bootstrap(
  l: KubeLaunchState,
  monitor: PodMonitor,
  opts: { name: string; nonce: string; clone: boolean; reusedName: boolean; progress: BootstrapProgress; onAgentctlStarting?: () => void },
  { delivery, gzip }: { delivery: AgentctlDelivery; gzip: boolean },
  early: Early | null,
  key: string | undefined,
): Promise<AgentctlDelivery> {
  const upload = (d: AgentctlDelivery, compress: boolean): Promise<void> =>
    bootstrapPod(l, { pod: opts.name, nonce: opts.nonce, delivery: d, clone: opts.clone, compress, progress: opts.progress, ...(opts.onAgentctlStarting ? { onAgentctlStarting: opts.onAgentctlStarting } : {}) });
  if (early === null) {
    await upload(delivery, gzip);
    return delivery;
  }
  try {
    await runBootstrap(l, opts.name, early.execs, early.done);
    return delivery;
  } catch (err) {
    if (!(err instanceof ProbeMismatchError)) throw err;
  }
  l.env.log.warn({ session: l.identity.sessionId, image: l.mainContainer?.image }, 'the image changed under its name since this controller probed it: probing it again');
  if (key !== undefined) l.env.probes.delete(key);
  const probe = await probeUntilReady(l, monitor, opts.name, opts.reusedName);
  if (key !== undefined) l.env.probes.set(key, probe);
  const fresh = deliveryFor(l, probe);
  await upload(fresh, probe.gzip);
  return fresh;
}
