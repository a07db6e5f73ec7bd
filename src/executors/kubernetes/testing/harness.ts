/**
 * Test support (never imported by shipped code): a KubernetesExecutor wired to the recording fakes
 * (fake-kube.ts, fake-pod-io.ts), with a request that records its inventory checkpoints, releases
 * and stage events, so a unit test can drive a launch, a resume, a stop or an rm and read back
 * exactly what reached the cluster and the inventory, in order.
 * @module
 */
import { FakePolicies } from './fake-policies.js';
import { fileURLToPath } from 'node:url';
import type { CreateInstanceRequest, ExecutorInstance, InstanceSecrets, RuntimeCheckpoint, StageEvent, StopTarget } from '../../executor.js';
import type { Logger } from '../../../shared/logger.js';
import { resourceNames } from '../compose/index.js';
import { encodeProfileSnapshot, parseKubernetesProfile } from '../config/index.js';
import { KubernetesExecutor } from '../executor.js';
import { PROFILE_SETTING } from '../stop.js';
import type { KubernetesProfile, WorkspaceMode } from '../types.js';
import { FakeKubeEvents } from './fake-events.js';
import { FakeKubeObjects } from './fake-kube.js';
import { FakeAgentctl, FakeExec } from './fake-pod-io.js';

export const NAMESPACE = 'berth-test';
const EXECUTOR = 'cluster';
const PROFILE = 'k8s';
const SESSION = 'ses-1';
const INSTANCE = 'inst-1';
/** The names a launch of {@link INSTANCE} gives its objects. */
export const { pod: POD_NAME, pvc: PVC_NAME } = resourceNames(INSTANCE);

const TEMPLATE = ['spec:', '  containers:', '    - name: agent', '      image: registry.example/agent:1.2', ''].join('\n');

/** A validated profile: managed_pvc by default, or another workspace mode; an optional cleanup script. */
export function testProfile(opts: { mode?: WorkspaceMode; claimName?: string; cleanupScript?: string } = {}): KubernetesProfile {
  const mode = opts.mode ?? 'managed_pvc';
  const workspace =
    mode === 'managed_pvc'
      ? { mode, size: '1Gi', accessModes: ['ReadWriteOnce'] }
      : mode === 'existing_claim'
        ? { mode, claimName: opts.claimName ?? 'shared' }
        : { mode };
  return parseKubernetesProfile(
    { platform: 'linux/amd64', mainContainer: 'agent', templateText: TEMPLATE, workspace, setupScript: '', cleanupScript: opts.cleanupScript ?? '' },
    { path: `profiles.${PROFILE}.kubernetes` },
  );
}

interface Recorded {
  checkpoints: RuntimeCheckpoint[];
  releases: number;
  stages: StageEvent[];
}

export class KubeHarness {
  readonly objects: FakeKubeObjects;
  readonly events = new FakeKubeEvents();
  readonly agentctl: FakeAgentctl;
  readonly exec: FakeExec;
  readonly policies = new FakePolicies();
  readonly executor: KubernetesExecutor;
  readonly recorded: Recorded = { checkpoints: [], releases: 0, stages: [] };
  /** Makes the next checkpoint writes fail (the inventory is down). */
  failCheckpoint: ((state: string) => Error | undefined) | null = null;
  /** Makes the release of the provisional row fail. */
  failRelease: Error | null = null;
  profile: KubernetesProfile;

  /** `objects`: another harness's cluster (a second controller on it, e.g. after the first was killed). */
  constructor(opts: { profile?: KubernetesProfile; logger?: Logger; objects?: FakeKubeObjects } = {}) {
    this.objects = opts.objects ?? new FakeKubeObjects();
    this.agentctl = new FakeAgentctl(this.objects);
    this.exec = new FakeExec(this.objects, this.agentctl);
    this.profile = opts.profile ?? testProfile();
    // the "agentctl bundle" is this very file: its bytes go nowhere but the fake exec
    const self = fileURLToPath(import.meta.url);
    this.executor = new KubernetesExecutor({
      name: EXECUTOR,
      connection: { authMode: 'kubeconfig', kubeconfigPath: null, kubeContext: null, namespace: NAMESPACE, requestTimeoutSeconds: 30 },
      artifacts: { bundle: self, sea: self },
      installationId: 'install-1',
      ...(opts.logger ? { logger: opts.logger } : {}),
      kube: { objects: this.objects, exec: this.exec, forward: this.agentctl, events: this.events, policies: this.policies },
      fetch: this.agentctl.fetch,
    });
  }

  /** The states checkpointed so far, in order. */
  get states(): string[] {
    return this.recorded.checkpoints.map((c) => c.state);
  }

  /** The stage events as `stage:status` (waiting events left out). */
  get stageTrail(): string[] {
    return this.recorded.stages.filter((s) => s.status !== 'waiting').map((s) => `${s.stage}:${s.status}`);
  }

  /** A launch request (fresh; with `previous`: a resume of that recorded instance). */
  request(opts: { previous?: { metadata: Readonly<Record<string, string>>; secrets: InstanceSecrets }; signal?: AbortSignal } = {}): CreateInstanceRequest {
    return {
      identity: { instanceId: INSTANCE, sessionId: SESSION, taskId: SESSION, environmentId: SESSION },
      repository: { url: 'https://git.example/repo.git' },
      env: {},
      secretEnv: {},
      profile: this.snapshot(),
      ...(opts.previous ? { previous: opts.previous } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      onStage: (e) => this.recorded.stages.push(e),
      checkpointRuntimeInventory: async (c) => {
        const err = this.failCheckpoint?.(c.state);
        if (err) throw err;
        this.recorded.checkpoints.push(c);
      },
      releaseRuntimeInventory: async () => {
        this.recorded.releases++;
        if (this.failRelease) throw this.failRelease;
      },
    };
  }

  snapshot(): CreateInstanceRequest['profile'] {
    return { executor: EXECUTOR, profile: PROFILE, type: 'kubernetes', settings: { [PROFILE_SETTING]: encodeProfileSnapshot(this.profile) }, env: {} };
  }

  /** A fresh launch through the executor. */
  launch(): Promise<ExecutorInstance> {
    return this.executor.createInstance(this.request());
  }

  /** What a stop or rm of `instance` is given (as the manager builds it). */
  stopTarget(metadata: Readonly<Record<string, string>>, instance?: ExecutorInstance): StopTarget {
    return { identity: { instanceId: INSTANCE, sessionId: SESSION, taskId: SESSION, environmentId: SESSION }, metadata, profile: this.snapshot(), ...(instance ? { control: instance.control } : {}) };
  }

  /** Forgets what was recorded so far (the calls of the fakes, the checkpoints, the stages). */
  resetRecords(): void {
    this.objects.calls.length = 0;
    this.exec.calls.length = 0;
    this.agentctl.forwards.length = 0;
    this.agentctl.handshakes.length = 0;
    this.agentctl.requests.length = 0;
    this.recorded.checkpoints.length = 0;
    this.recorded.stages.length = 0;
    this.recorded.releases = 0;
  }
}

/** Runs `promise` and returns what it rejected with (fails when it resolves). */
export async function rejection(promise: Promise<unknown>): Promise<Error & { reason?: string; stage?: string; rollbackErrors?: unknown[] }> {
  try {
    await promise;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}
