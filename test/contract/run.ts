/**
 * One run of the executor contract against one subject: the subject itself, the requests it builds
 * (the way `src/controller/launch.ts` builds them), the launches it made (so the teardown destroys
 * every instance and checks that nothing of any session is left) and the shared launch most cases
 * inspect.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { CreateInstanceRequest, Executor, ExecutorInstance, ExecutorProfileSnapshot, InstanceStatus, RepositorySpec, StopTarget } from '../../src/executors/executor.js';
import { LaunchRecorder, runProcess, type HeldResource, type ProcessResult } from './recording.js';

/** Every case of the contract, by key (the titles the suites show). */
export const CONTRACT_CASES = {
  fresh: 'a fresh launch reaches a connected instance whose client runs a process in the workspace',
  stages: 'stage events start with running and end succeeded, one stage at a time',
  checkpoints: 'a checkpoint follows each side effect inside its stage, records everything that exists, and is never ready',
  metadata: 'the instance metadata and every checkpoint are entirely persistable',
  secrets: 'secret env reaches processes but never the metadata, the checkpoints or what the executor exposes',
  controllerEnv: 'env of the controller does not reach processes',
  reconnect: 'a reconnect with the recorded metadata and secrets restarts nothing and sees the earlier process',
  refresh: 'refreshInstance after close() re-attaches to the same instance',
  restart: 'after close() of the executor the instance runs on, and a new executor of the same config reconnects to it',
  status: 'status says running, then stopped or missing after a stop',
  revive: 'a revive after a stop brings the same instance back on the kept workspace, with its earlier processes',
  destroy: 'stop with destroy removes everything the instance held',
  idempotentStop: 'stopInstance is idempotent (keep twice, then destroy twice)',
  badRepository: 'a failed launch (bad repository) rolls back and releases the provisional row exactly once',
  failingSetup: 'a failed launch (failing setup script) rolls back and releases the provisional row exactly once',
  checkpointFailure: 'a rejected checkpoint fails the launch at its stage, rolls back and releases the row exactly once',
  removeUnrecorded: 'removeUnrecorded removes what a launch created before its first record (a crash in between), and is idempotent',
  readRecordedOutput: 'readRecordedOutput reads what a process of a stopped instance printed, per stream and from a sequence number',
  watchInstance: 'watchInstance stays quiet while the instance is healthy, reports its stop once, and ends when told',
  startSweeps: 'startSweeps never touches what a session records, and its stop resolves once the sweep ended',
  startPools: 'startPools with no pooled profile makes no member and touches no session, and its stop resolves',
} as const;
export type ContractCase = keyof typeof CONTRACT_CASES;

/** An executor under test plus the probes the contract needs to see what it did. */
export interface ContractSubject {
  executor: Executor;
  /** Another executor of the same configuration, as a restarted controller builds it. */
  reopen(): Executor;
  /** The profile snapshot a launch records, built the way `src/controller/launch.ts` gets it. */
  profile: ExecutorProfileSnapshot;
  /** A repository the executor can clone, holding `marker.file` with `marker.text`. */
  repository: RepositorySpec;
  marker: { file: string; text: string };
  /** A repository that passes validation but cannot be cloned. */
  badRepository: RepositorySpec;
  /** A profile whose setup script fails; undefined when the executor has no setup script. */
  failingSetupProfile: ExecutorProfileSnapshot | undefined;
  /** What exists for `sessionId` right now outside the test process (Pods, PVCs, dirs, agentctl processes). */
  held(sessionId: string): Promise<HeldResource[]>;
  /** Text of what the executor exposes beyond the processes (Pod specs, argv, logs): no secret may be in it. */
  exposed(sessionId: string): Promise<string>;
  close(): Promise<void>;
}

export type ContractFactory = () => Promise<ContractSubject>;

/** Set in the test process before the factory runs: must never reach a process of an instance. */
export const CONTROLLER_ONLY = 'CONTRACT_CONTROLLER_ONLY';
export const SEPARATOR = '---contract---';

export interface Launched {
  req: CreateInstanceRequest;
  rec: LaunchRecorder;
  instance: ExecutorInstance;
  /** What existed right after createInstance returned. */
  held: HeldResource[];
}

export interface Failed {
  req: CreateInstanceRequest;
  rec: LaunchRecorder;
  error: unknown;
}

export interface Shared extends Launched {
  /** A process that printed its cwd, the marker file and its environment. */
  probe: ProcessResult;
  /** A process left running (`sleep`): a restarted agentctl could not report it running with this pid. */
  sleeper: { id: string; pid: number | null };
}

export const recordedValues = (held: readonly HeldResource[]): string[] => held.map((h) => h.recordedAs).sort();
export const stoppedLike = (s: InstanceStatus): boolean => s.liveness === 'stopped' || s.liveness === 'missing';
/** The subject's own metadata key prefix, as its capabilities declare it: the only executor keys the inventory persists for it. */
export const ownPrefix = (run: ContractRun): string[] => [run.subject.executor.capabilities.metadataKeyPrefix];

export class ContractRun {
  subject!: ContractSubject;
  shared!: Promise<Shared>;
  readonly secretValue = `ct-secret-${randomBytes(12).toString('hex')}`;
  readonly controllerValue = `ct-controller-${randomBytes(6).toString('hex')}`;
  readonly #sessions: string[] = [];
  /** The latest instance of each session (a revive replaces the one it revived). */
  readonly #live = new Map<string, { instance: ExecutorInstance; profile: ExecutorProfileSnapshot }>();

  constructor(readonly name: string) {}

  async start(factory: ContractFactory): Promise<void> {
    process.env[CONTROLLER_ONLY] = this.controllerValue;
    this.subject = await factory();
    this.shared = this.#launchShared();
    this.shared.catch(() => undefined);
  }

  /** Destroys every instance the run made, closes the executor, and lists what any session left. */
  async teardown(): Promise<string[]> {
    const problems: string[] = [];
    const subject = this.subject as ContractSubject | undefined;
    for (const { instance, profile } of this.#live.values()) {
      await instance.close();
      await subject?.executor
        .stopInstance({ identity: instance.identity, metadata: instance.metadata, profile }, { destroy: true, reason: 'contract_teardown' })
        .catch((err: unknown) => problems.push(`stop ${instance.identity.sessionId}: ${String(err)}`));
    }
    await subject?.executor.close();
    for (const id of this.#sessions) for (const h of (await subject?.held(id)) ?? []) problems.push(`${id}: ${h.what} left behind`);
    await subject?.close().catch((err: unknown) => problems.push(String(err)));
    delete process.env[CONTROLLER_ONLY];
    return problems;
  }

  /** A fresh-launch request for a new session, recording into a new recorder. */
  request(key: string, overrides: Partial<CreateInstanceRequest> = {}): { req: CreateInstanceRequest; rec: LaunchRecorder } {
    const sessionId = `ct-${key}-${randomBytes(3).toString('hex')}`;
    this.#sessions.push(sessionId);
    const rec = this.recorder(sessionId);
    const req: CreateInstanceRequest = {
      identity: { instanceId: `${sessionId}-${randomBytes(3).toString('hex')}`, sessionId, taskId: sessionId, environmentId: sessionId },
      repository: this.subject.repository,
      env: { CONTRACT_REQUEST: 'from-request' },
      secretEnv: { CONTRACT_SECRET: this.secretValue },
      profile: this.subject.profile,
      ...rec.callbacks(),
      ...overrides,
    };
    return { req, rec };
  }

  recorder(sessionId: string): LaunchRecorder {
    return new LaunchRecorder(() => this.subject.held(sessionId));
  }

  /** A reconnect/revive of `l` as the manager asks for it: the recorded metadata and secrets, no release callback. */
  reviveRequest(l: Launched, rec: LaunchRecorder): CreateInstanceRequest {
    const { identity, repository, env, secretEnv, profile } = l.req;
    return { identity, repository, env, secretEnv, profile, ...rec.refreshCallbacks(), previous: { metadata: l.instance.metadata, secrets: l.instance.secrets } };
  }

  /** Registers the instance of its session the teardown must destroy. */
  track(instance: ExecutorInstance, profile: ExecutorProfileSnapshot): ExecutorInstance {
    this.#live.set(instance.identity.sessionId, { instance, profile });
    return instance;
  }

  async launch(key: string, executor: Executor = this.subject.executor): Promise<Launched> {
    const { req, rec } = this.request(key);
    const instance = this.track(await executor.createInstance(req), req.profile);
    return { req, rec, instance, held: await this.subject.held(req.identity.sessionId) };
  }

  async launchFailing(req: CreateInstanceRequest, rec: LaunchRecorder): Promise<Failed> {
    const error = await this.subject.executor.createInstance(req).then(
      (instance) => {
        this.track(instance, req.profile);
        return null;
      },
      (err: unknown) => err,
    );
    return { req, rec, error };
  }

  targetOf(l: Launched): StopTarget {
    return { identity: l.instance.identity, metadata: l.instance.metadata, profile: l.req.profile };
  }

  async #launchShared(): Promise<Shared> {
    const l = await this.launch('shared');
    const probe = await runProcess(l.instance.client, ['sh', '-c', `pwd; echo ${SEPARATOR}; cat "$1"; echo ${SEPARATOR}; env`, 'sh', this.subject.marker.file]);
    const sleeper = await l.instance.client.startProcess({ command: ['sleep', '3600'] });
    return { ...l, probe, sleeper: { id: sleeper.id, pid: sleeper.pid } };
  }
}
