/**
 * The local executor (the embedded default): a workspace directory under the data dir and a local
 * agentctl started as a detached child. Fresh launches run the stages `workspace`, `agentctl_start`
 * and `agentctl_connect`; a reconnect uses the recorded port and token and, when agentctl died,
 * starts it again with the recorded nonce.
 * @module
 */
import { join, relative, resolve, sep } from 'node:path';
import { existsSync } from 'node:fs';
import { KeyedLock } from '../../shared/locks.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import { errorMessage } from '../../shared/errors.js';
import type {
  CreateInstanceRequest,
  Executor,
  ExecutorInstance,
  InstanceStatus,
  RecordedOutputChunk,
  StopOptions,
  StopTarget,
} from '../executor.js';
import { LaunchError } from '../executor.js';
// The one agentctl module the controller side reads: a pure, read-only reader of its process records.
import { readRecordedOutput } from '../../agentctl/processes/recorded-output.js';
import { agentctlBaseEnv, stopAgentctl } from './agentctl-process.js';
import { probeControl } from './connect.js';
import { FILES, OWNER_ENV } from './constants.js';
import { FreshLaunch, ReviveLaunch } from './launch.js';
import { decodeLocalMetadata } from './metadata.js';
import { findProcessesByEnv, isOurProcess } from './proc.js';
import { removeSessionDir } from './workspace.js';

export interface LocalExecutorOptions {
  /** Name of the executor entry in the config. @default 'local' */
  name?: string;
  /** The data dir; workspaces live in `<dataDir>/workspaces/<sessionId>`. */
  dataDir: string;
  /** The agentctl bundle (`dist/agentctl.cjs`). */
  agentctlPath: string;
  logger?: Logger;
  /** Base environment of agentctl and its processes. @default process.env without BERTH_/AGENTCTL_ variables */
  env?: NodeJS.ProcessEnv;
  /** How long agentctl may take to answer /health after start, in ms. @default 20000 */
  healthTimeoutMs?: number;
}

export class LocalExecutor implements Executor {
  readonly name: string;
  readonly #opts: Required<Omit<LocalExecutorOptions, 'name'>>;
  readonly #locks = new KeyedLock();

  constructor(opts: LocalExecutorOptions) {
    this.name = opts.name ?? 'local';
    this.#opts = {
      dataDir: resolve(opts.dataDir),
      agentctlPath: opts.agentctlPath,
      logger: opts.logger ?? silentLogger,
      env: opts.env ?? agentctlBaseEnv(process.env),
      healthTimeoutMs: opts.healthTimeoutMs ?? 20_000,
    };
  }

  /** `<dataDir>/workspaces`: the only directory this executor ever removes things from. */
  get workspacesRoot(): string {
    return join(this.#opts.dataDir, 'workspaces');
  }

  sessionDir(sessionId: string): string {
    return join(this.workspacesRoot, sessionId);
  }

  createInstance(req: CreateInstanceRequest): Promise<ExecutorInstance> {
    if (req.identity.instanceId === '' || req.identity.sessionId === '') {
      return Promise.reject(new LaunchError('initialize', 'InvalidRequest', 'local executor: request identity is incomplete'));
    }
    const common = {
      req,
      executorName: this.name,
      sessionDir: this.sessionDir(req.identity.sessionId),
      agentctlPath: this.#opts.agentctlPath,
      baseEnv: this.#opts.env,
      healthTimeoutMs: this.#opts.healthTimeoutMs,
      log: this.#opts.logger,
    };
    return this.#locks.run(req.identity.instanceId, async () => {
      if (req.previous === undefined) return new FreshLaunch(common).launch();
      return new ReviveLaunch({ ...common, previous: req.previous }).launch();
    });
  }

  refreshInstance(
    instance: ExecutorInstance,
    req: Pick<CreateInstanceRequest, 'onStage' | 'checkpointRuntimeInventory' | 'secretEnv' | 'env'>,
  ): Promise<ExecutorInstance> {
    return this.createInstance({
      identity: instance.identity,
      repository: {},
      env: req.env,
      secretEnv: req.secretEnv,
      profile: { executor: this.name, type: 'local', settings: { agentctl_path: this.#opts.agentctlPath }, env: {} },
      previous: { metadata: instance.metadata, secrets: instance.secrets },
      onStage: req.onStage,
      checkpointRuntimeInventory: req.checkpointRuntimeInventory,
    });
  }

  async status(target: StopTarget): Promise<InstanceStatus> {
    const meta = decodeLocalMetadata(target.metadata);
    if (!existsSync(meta.workspacePath)) return { liveness: 'missing', detail: `workspace ${meta.workspacePath} is gone` };
    const owner = { env: OWNER_ENV, value: ownerValue(meta.sessionDir, meta.instanceId), procStart: meta.agentctlProcStart };
    if (meta.agentctlPid === null || !isOurProcess(meta.agentctlPid, owner)) return { liveness: 'stopped', detail: 'agentctl is not running' };
    if (meta.controlPort === null || !(await probeControl(meta.controlPort))) {
      return { liveness: 'unreachable', detail: `agentctl pid ${meta.agentctlPid} does not answer on port ${meta.controlPort ?? '?'}` };
    }
    return { liveness: 'running', detail: `agentctl pid ${meta.agentctlPid} on port ${meta.controlPort}` };
  }

  stopInstance(target: StopTarget, opts: StopOptions): Promise<void> {
    return this.#locks.run(target.identity.instanceId, async () => {
      const meta = decodeLocalMetadata(target.metadata);
      const owner = ownerValue(meta.sessionDir, meta.instanceId);
      const errors: unknown[] = [];
      const pids = new Set<number>();
      if (meta.agentctlPid !== null) pids.add(meta.agentctlPid);
      // a launch cut short between spawn and checkpoint has no recorded pid: find it by our marker
      for (const pid of findProcessesByEnv(OWNER_ENV, owner)) pids.add(pid);
      for (const pid of pids) {
        try {
          const outcome = await stopAgentctl({ pid, procStart: pid === meta.agentctlPid ? meta.agentctlProcStart : null, owner });
          this.#opts.logger.info({ session: target.identity.sessionId, pid, outcome, reason: opts.reason }, 'agentctl stop');
        } catch (err) {
          errors.push(err);
        }
      }
      if (opts.destroy && errors.length === 0) {
        try {
          await removeSessionDir(this.#safeSessionDir(meta.sessionDir, target.identity.sessionId));
        } catch (err) {
          errors.push(err);
        }
      }
      if (errors.length > 0) {
        throw new AggregateError(errors, `local executor: stop ${target.identity.sessionId}: ${errors.map((e) => errorMessage(e)).join('; ')}`);
      }
    });
  }

  /** Removes the session dir of a launch that recorded nothing yet (crash before the first checkpoint). */
  async removeUnrecorded(sessionId: string): Promise<void> {
    await removeSessionDir(this.#safeSessionDir(this.sessionDir(sessionId), sessionId));
  }

  /**
   * Reads an agent's output from `<sessionDir>/agentctl-state/<instanceId>` (the state dir the
   * local agentctl was started with), so `berth logs` works while the session is stopped.
   */
  readRecordedOutput(target: StopTarget, processId: string, from: number): Promise<RecordedOutputChunk[] | null> {
    const meta = decodeLocalMetadata(target.metadata);
    const sessionDir = this.#safeSessionDir(meta.sessionDir, target.identity.sessionId);
    const recorded = readRecordedOutput(join(sessionDir, FILES.agentctlState, meta.instanceId), processId, from);
    return Promise.resolve(recorded === null ? null : recorded.chunks.map((c) => ({ seq: c.seq, stream: c.stream, data: c.data })));
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  /** Refuses to remove (or read) anything that is not `<dataDir>/workspaces/<sessionId>`. */
  #safeSessionDir(dir: string, sessionId: string): string {
    const abs = resolve(dir);
    const rel = relative(this.workspacesRoot, abs);
    if (rel !== sessionId || rel.includes(sep) || rel.startsWith('..')) {
      throw new Error(`local executor: refusing to remove ${abs}: not the workspace dir of session ${sessionId}`);
    }
    return abs;
  }
}

export function ownerValue(sessionDir: string, instanceId: string): string {
  return `${sessionDir}#${instanceId}`;
}

