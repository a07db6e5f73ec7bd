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
import type { V1Pod } from '@kubernetes/client-node';
import { CHECKPOINT, STAGE } from '../constants.js';
import type { AgentctlDelivery } from '../artifacts.js';
import { probeGuard, type ProbeResult } from '../compose/index.js';
import type { ExecResult } from '../kube/index.js';
import { bootstrapExecs, bootstrapPod, ProbeMismatchError, runBootstrap, type BootstrapExec } from './bootstrap.js';
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

interface Early {
  execs: BootstrapExec[];
  done: Promise<ExecResult>;
}

interface PodBootstrapOptions {
  name: string;
  nonce: string;
  clone: boolean;
  /** Called the moment the bootstrap exec says it wrote the start marker (agentctl starts then). */
  onAgentctlStarting?: () => void;
  /** The Pod stage `storage` created (its scheduling gate lifted); none: `pod_ready` creates it. */
  created?: V1Pod;
}

/**
 * The bodies of stages `pod_ready` ({@link ready}: create the Pod, wait until it takes an exec) and
 * `bootstrap` ({@link run}) of one new Pod, with the image's probe remembered or used. The caller
 * runs them as stages and closes the monitor `ready` returns; after a failure before the bootstrap
 * ended it calls {@link fail}.
 */
export class PodBootstrap {
  readonly #l: KubeLaunchState;
  readonly #opts: PodBootstrapOptions;
  readonly #key: string | undefined;
  readonly #remembered: ProbeResult | undefined;
  /** A replacement's name was an earlier Pod's, whose containers may still run (see createReadyPod); not after a stop that saw that Pod gone with them (a resume). */
  readonly #reusedName: boolean;
  /** Made first: an exec started while the Pod comes up already reports its steps to it. */
  readonly #progress: BootstrapProgress;
  #delivery: AgentctlDelivery | null = null;
  #gzip = false;
  #early: Early | null = null;

  constructor(l: KubeLaunchState, opts: PodBootstrapOptions) {
    this.#l = l;
    this.#opts = opts;
    this.#key = probeKey(l);
    this.#remembered = this.#key === undefined || l.req.repository.path !== undefined ? undefined : l.env.probes.get(this.#key);
    this.#reusedName = !opts.clone && !l.meta.podReclaimed;
    this.#progress = new BootstrapProgress({
      budgets: l.profile.budgets,
      timeoutsPath: `profiles.${l.identity.profile}.kubernetes.timeouts`,
      report: (reason, message) => l.report({ stage: STAGE.bootstrap, status: 'waiting', reason, message }),
    });
  }

  /** Stage `pod_ready`: creates the Pod and waits until it takes an exec; returns the Pod's monitor. */
  async ready(): Promise<PodMonitor> {
    const l = this.#l;
    const remembered = this.#remembered;
    if (remembered === undefined) {
      const ready = await createReadyPod(l, this.#opts.name, { reusedName: this.#reusedName, ...this.#created() });
      const probe = ready.probe as ProbeResult;
      if (this.#key !== undefined) l.env.probes.set(this.#key, probe);
      this.#delivery = deliveryFor(l, probe);
      this.#gzip = probe.gzip;
      return ready.monitor;
    }
    this.#gzip = remembered.gzip;
    const delivery = deliveryFor(l, remembered);
    this.#delivery = delivery;
    const execs = await bootstrapExecs(l, { ...this.#uploadOptions(), delivery, compress: remembered.gzip, guard: probeGuard(remembered) });
    const [first] = execs;
    if (first === undefined) throw new Error('the bootstrap has no exec');
    const ready = await createReadyPod(l, this.#opts.name, { reusedName: this.#reusedName, first, ...this.#created() });
    if (ready.first !== null) this.#early = { execs, done: ready.first };
    return ready.monitor;
  }

  /** Stage `bootstrap`: the upload and prepare.sh, each step under its budget; returns the delivery used. */
  async run(monitor: PodMonitor): Promise<AgentctlDelivery> {
    const l = this.#l;
    monitor.endBudgets();
    monitor.stage = STAGE.bootstrap;
    const options = { ...this.#uploadOptions(), name: this.#opts.name, reusedName: this.#reusedName };
    const used = { delivery: this.#delivery as AgentctlDelivery, gzip: this.#gzip };
    this.#progress.start();
    try {
      this.#delivery = await Promise.race([bootstrap(l, monitor, options, used, this.#early, this.#key), monitor.failure, this.#progress.expired]);
    } finally {
      this.#progress.stop();
    }
    await l.checkpoint(CHECKPOINT.bootstrapped);
    return this.#delivery;
  }

  /** After a failure of either stage: the progress stops, and a remembered probe is forgotten (the next launch probes again). */
  fail(): void {
    this.#progress.stop();
    if (this.#remembered !== undefined && this.#key !== undefined) this.#l.env.probes.delete(this.#key);
  }

  #created(): { created?: V1Pod } {
    return this.#opts.created !== undefined ? { created: this.#opts.created } : {};
  }

  #uploadOptions(): { nonce: string; clone: boolean; progress: BootstrapProgress; onAgentctlStarting?: () => void } {
    const { nonce, clone, onAgentctlStarting } = this.#opts;
    return { nonce, clone, progress: this.#progress, ...(onAgentctlStarting ? { onAgentctlStarting } : {}) };
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
