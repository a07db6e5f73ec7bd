/**
 * A recording fake {@link Executor} for the controller's unit tests (SessionLaunch, SessionManager):
 * its launch runs scripted stages through the launch kit's stage runner, each followed by its
 * checkpoint, and fails where the script says (rolling back as a real executor does: its own
 * cleanup, then the release of the provisional row). Its instance holds a fake agentctl that keeps
 * the processes started in it. Every call lands in `calls`, in order.
 * @module
 */
import type { ControlClient, InstanceClient } from '../../agentctl-client/index.js';
import type {
  CreateInstanceRequest,
  Executor,
  ExecutorCapabilities,
  ExecutorInstance,
  InstanceIdentity,
  InstanceLiveness,
  RefreshRequest,
  StopOptions,
  StopTarget,
} from '../../executors/executor.js';
import { REPLACEMENT_STAGE, Rollback, runStage } from '../../executors/launch-kit/index.js';
import type { ProcessInfo } from '../../protocol/index.js';

/** The metadata key prefix of the fake's own runtime metadata (open the inventory with it). */
export const FAKE_METADATA_PREFIX = 'fake_';
/** Runtime metadata key: the stages whose side effects the fake's launch "created", comma-separated. */
export const FAKE_CREATED_KEY = `${FAKE_METADATA_PREFIX}created`;

/** The capabilities the fake declares unless a test passes its own. */
export const FAKE_CAPABILITIES: ExecutorCapabilities = {
  repositoryOptional: false,
  clonesOnControllerHost: true,
  metadataKeyPrefix: FAKE_METADATA_PREFIX,
  removes: 'the fake workspace',
  replacement: { stage: REPLACEMENT_STAGE, machine: 'Pod', note: 'a new Pod runs on the same volume' },
};

/** What the fake does; tests change it between calls. */
export interface FakeScript {
  /** The stages of a launch, in order, each with the checkpoint written after its side effect. */
  stages: readonly { stage: string; checkpoint: string }[];
  /** A launch fails in this stage (before its checkpoint). */
  failAt?: string;
  /** What the failing stage throws. @default an Error naming the stage */
  failure?: unknown;
  /** Errors the fake's own rollback of a failed launch reports (they ride along on the launch error). */
  rollbackErrors?: unknown[];
  /** `revived` of a launch with `previous` (a fresh launch is always revived). @default false */
  revived?: boolean;
  /** What stopInstance throws. */
  stopError?: unknown;
  /** What the fake agentctl's startProcess throws. */
  startProcessError?: unknown;
  /** What refreshInstance throws, or how its instance comes back. */
  refresh?: { error?: unknown; revived?: boolean; replaced?: ExecutorInstance['replaced'] };
  /** What status() answers. @default 'running' */
  liveness?: InstanceLiveness;
}

/** One recorded call (or, for `rollback`, the fake's own rollback of a failed launch). */
type FakeCall =
  | { op: 'createInstance'; req: CreateInstanceRequest }
  | { op: 'rollback'; errors: unknown[]; released: boolean }
  | { op: 'stopInstance'; target: StopTarget; opts: StopOptions }
  | { op: 'refreshInstance'; instance: ExecutorInstance; req: RefreshRequest }
  | { op: 'status'; target: StopTarget }
  | { op: 'startProcess'; id: string; kind: string; command: readonly string[] }
  | { op: 'instanceClose'; instanceId: string }
  | { op: 'close' };

/** The local executor's stages and checkpoints (the order SessionLaunch's checkpoints follow). */
export const LOCAL_LIKE_STAGES = [
  { stage: 'workspace', checkpoint: 'workspace_created' },
  { stage: 'agentctl_start', checkpoint: 'agentctl_started' },
  { stage: 'agentctl_connect', checkpoint: 'agentctl_connected' },
] as const;

export class FakeExecutor implements Executor {
  readonly name: string;
  readonly capabilities: ExecutorCapabilities;
  readonly calls: FakeCall[] = [];
  /** The processes of the fake agentctl (shared by every instance of this executor). */
  readonly processes: ProcessInfo[] = [];
  script: FakeScript;
  #launches = 0;

  constructor(opts: { name?: string; capabilities?: ExecutorCapabilities; script?: Partial<FakeScript> } = {}) {
    this.name = opts.name ?? 'fake';
    this.capabilities = opts.capabilities ?? FAKE_CAPABILITIES;
    this.script = { stages: LOCAL_LIKE_STAGES, ...opts.script };
  }

  /** The names of the recorded calls, in order. */
  ops(): string[] {
    return this.calls.map((c) => c.op);
  }

  /** The recorded calls of one kind. */
  callsOf<K extends FakeCall['op']>(op: K): Extract<FakeCall, { op: K }>[] {
    return this.calls.filter((c): c is Extract<FakeCall, { op: K }> => c.op === op);
  }

  async createInstance(req: CreateInstanceRequest): Promise<ExecutorInstance> {
    this.calls.push({ op: 'createInstance', req });
    const created: string[] = [];
    try {
      for (const { stage, checkpoint } of this.script.stages) {
        await runStage(req.onStage, stage, async () => {
          if (this.script.failAt === stage) throw this.script.failure ?? new Error(`${stage} broke`);
          created.push(stage);
          await req.checkpointRuntimeInventory({ state: checkpoint, metadata: { [FAKE_CREATED_KEY]: created.join(',') } });
        });
      }
    } catch (err) {
      const rb = new Rollback();
      rb.record(...(this.script.rollbackErrors ?? []));
      let released = false;
      const release = req.releaseRuntimeInventory;
      if (release) {
        await rb.step('release the runtime row', async () => {
          await release();
          released = true;
        });
      }
      this.calls.push({ op: 'rollback', errors: rb.errors, released });
      throw rb.finish(err);
    }
    return this.#instance(req.identity, req.previous ? (this.script.revived ?? false) : true, created);
  }

  async stopInstance(target: StopTarget, opts: StopOptions): Promise<void> {
    this.calls.push({ op: 'stopInstance', target, opts });
    if (this.script.stopError !== undefined) throw this.script.stopError;
  }

  async refreshInstance(instance: ExecutorInstance, req: RefreshRequest): Promise<ExecutorInstance> {
    this.calls.push({ op: 'refreshInstance', instance, req });
    const refresh = this.script.refresh ?? {};
    if (refresh.error !== undefined) throw refresh.error;
    const next = this.#instance(instance.identity, refresh.revived ?? false, []);
    return refresh.replaced ? { ...next, replaced: refresh.replaced } : next;
  }

  async status(target: StopTarget): Promise<{ liveness: InstanceLiveness; detail: string }> {
    this.calls.push({ op: 'status', target });
    return { liveness: this.script.liveness ?? 'running', detail: 'fake' };
  }

  async close(): Promise<void> {
    this.calls.push({ op: 'close' });
  }

  #instance(identity: InstanceIdentity, revived: boolean, created: string[]): ExecutorInstance {
    const n = ++this.#launches;
    return {
      identity,
      executor: this.name,
      workspacePath: '/fake/workspace',
      metadata: { [FAKE_CREATED_KEY]: created.join(',') },
      secrets: { authToken: `token-${n}`, bootstrapNonce: `nonce-${n}` },
      control: {} as ControlClient,
      client: this.#client(),
      revived,
      agentctlCommand: ['agentctl'],
      close: async () => {
        this.calls.push({ op: 'instanceClose', instanceId: identity.instanceId });
      },
    };
  }

  /** The fake agentctl: the calls the controller makes to start, list and signal processes. */
  #client(): InstanceClient {
    const client = {
      listProcesses: async () => [...this.processes],
      getProcess: async (id: string) => {
        const info = this.processes.find((p) => p.id === id);
        if (!info) throw new Error(`fake agentctl: no process ${id}`);
        return info;
      },
      startProcess: async (r: { id?: string; kind?: string; command: string[] }) => {
        const id = r.id ?? `p-${this.processes.length + 1}`;
        this.calls.push({ op: 'startProcess', id, kind: r.kind ?? 'process', command: r.command });
        if (this.script.startProcessError !== undefined) throw this.script.startProcessError;
        const info = fakeProcess(id, r.kind === 'agent' ? 'agent' : 'process', 'running', r.command);
        this.processes.push(info);
        return info;
      },
      writeStdin: async () => undefined,
      signal: async () => undefined,
      files: { writeFile: async () => undefined },
    };
    return client as unknown as InstanceClient;
  }
}

/** A process as the fake agentctl lists it. */
export function fakeProcess(id: string, kind: ProcessInfo['kind'], status: ProcessInfo['status'], command: readonly string[] = ['agent']): ProcessInfo {
  return {
    id,
    kind,
    command: [...command],
    cwd: '/fake/workspace',
    status,
    pid: status === 'running' ? 4242 : null,
    exit_code: status === 'exited' ? 0 : null,
    signal: null,
    started_at: new Date(0).toISOString(),
    ended_at: status === 'exited' ? new Date(0).toISOString() : null,
    next_seq: 0,
    orphaned: false,
  };
}
