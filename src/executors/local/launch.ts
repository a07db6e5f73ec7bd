/**
 * Launch objects of the local executor: one method per stage, a record of what *this* launch
 * created, and a rollback that removes exactly that (spec §4, STYLE E7).
 * @module
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ControlClient, InstanceClient } from '../../agentctl-client/index.js';
import { isAgentctlHttpError } from '../../agentctl-client/index.js';
import { errorMessage } from '../../shared/errors.js';
import type { Logger } from '../../shared/logger.js';
import { sanitize } from '../../shared/sanitize.js';
import type { CreateInstanceRequest, ExecutorInstance, InstanceSecrets } from '../executor.js';
import { INIT_STAGE, LaunchError, REASON, Rollback, runStage, type StageNote } from '../launch-kit/index.js';
import { agentctlLogTail, agentctlStartCommand, spawnAgentctl, stopAgentctl, waitSandboxGone, type AgentctlProcess } from './agentctl-process.js';
import { controlClient, waitHealthy } from './connect.js';
import { bindControlSocket, openEndpoint, type AgentctlEndpoint } from './control-socket.js';
import { listensOn } from './listener.js';
import { waitForPortReport } from './report-pipe.js';
import { CHECKPOINT, FILES, OWNER_ENV, STAGE } from './constants.js';
import { decodeLocalMetadata, encodeLocalMetadata, type LocalMetadata } from './metadata.js';
import { isOurProcess } from './proc.js';
import { privateNetworkEnv, privateNetworkFor, privateNetworkPlan } from './private-network.js';
import type { LaunchSandbox } from './sandbox.js';
import { buildSandboxPlan, type BuiltSandboxPlan } from './sandbox-plan.js';
import { cloneRepository, killLaunchChildren, removeSessionDir, validateRepository } from './workspace.js';

interface LaunchContext {
  req: CreateInstanceRequest;
  executorName: string;
  sessionDir: string;
  agentctlPath: string;
  baseEnv: NodeJS.ProcessEnv;
  healthTimeoutMs: number;
  sandbox: LaunchSandbox;
  /** The egress proxy's Unix socket on this host (null: berth serve runs none), for sessions under a network policy. */
  egressSocket: string | null;
  /** The rollback's own deadline (spec §4.9). @default ROLLBACK_TIMEOUT_MS of the launch kit */
  rollbackTimeoutMs?: number;
  log: Logger;
}

abstract class LocalLaunchBase {
  protected meta: LocalMetadata;
  /** What this launch started (and therefore may stop on rollback). */
  protected startedAgentctl: AgentctlProcess | null = null;
  /** The spawn of agentctl, once begun (a fresh launch begins it during the clone). */
  protected spawning: Promise<AgentctlProcess> | null = null;
  protected control: ControlClient | null = null;
  protected client: InstanceClient | null = null;
  protected token: string | null = null;
  /** Where the clients reach agentctl (a relay to its control socket under a network policy): closed with the instance. */
  protected endpoint: AgentctlEndpoint | null = null;

  constructor(protected readonly ctx: LaunchContext) {
    const { identity } = ctx.req;
    this.meta = {
      instanceId: identity.instanceId,
      sessionDir: ctx.sessionDir,
      workspacePath: join(ctx.sessionDir, FILES.repo),
      workspaceCreated: false,
      launchKind: 'fresh',
      agentctlPath: ctx.agentctlPath,
      agentctlPid: null,
      agentctlProcStart: null,
      controlPort: null,
      instancePort: null,
    };
  }

  protected get owner(): string {
    return `${this.meta.sessionDir}#${this.meta.instanceId}`;
  }

  /** The warning the `agentctl_start` stage carries when agentctl runs without the sandbox. */
  protected sandboxNote = (): StageNote | null =>
    this.ctx.sandbox.kind === 'none' && this.ctx.sandbox.warning !== null ? { reason: 'Unsandboxed', message: this.ctx.sandbox.warning } : null;

  /**
   * The bwrap plan of this session (sandbox-plan.ts): its workspace, state dir and private home
   * writable; the data dir, the user's home and the other hidden paths invisible.
   */
  #sandboxPlan(): BuiltSandboxPlan | null {
    const sb = this.ctx.sandbox;
    if (sb.kind === 'none') return null;
    return buildSandboxPlan(sb, { sessionDir: this.meta.sessionDir, workspacePath: this.meta.workspacePath, agentctlPath: this.ctx.agentctlPath });
  }

  /**
   * Runs one stage with start/end notifications; any failure becomes a LaunchError naming the stage.
   * A `note` (reason + message, e.g. the warning that agentctl runs unconfined) is reported as the
   * stage's detail right after it starts — the CLI prints it on the launch — and stays on its record.
   */
  protected stage<T>(name: string, fn: () => Promise<T>, note?: () => StageNote | null): Promise<T> {
    return runStage(this.ctx.req.onStage, name, fn, note ? { note } : {});
  }

  /** A rollback under this launch's deadline (the launch kit's one setting unless a test shortens it). */
  protected rollback(): Rollback {
    return new Rollback(this.ctx.rollbackTimeoutMs !== undefined ? { timeoutMs: this.ctx.rollbackTimeoutMs } : {});
  }

  protected checkpoint(state: string): Promise<void> {
    return this.ctx.req.checkpointRuntimeInventory({ state, metadata: encodeLocalMetadata(this.meta, state) });
  }

  /**
   * Begins spawning agentctl with `nonce` (the workspace directory must exist: the sandbox binds
   * it). A spawn that fails is reported by the `agentctl_start` stage that awaits it; until then its
   * rejection is held.
   */
  protected beginSpawn(nonce: string): Promise<AgentctlProcess> {
    const built = this.#sandboxPlan();
    const spawning = (async () => {
      // a network policy: no network of its own, reached through a control socket bound here (private-network.ts)
      const net = privateNetworkFor(this.ctx.req.profile.settings, this.ctx.sandbox, this.ctx.egressSocket);
      const socket = net === null ? null : await bindControlSocket(this.meta.sessionDir);
      try {
        const proc = await spawnAgentctl({
          agentctlPath: this.ctx.agentctlPath,
          sessionDir: this.meta.sessionDir,
          nonce,
          owner: this.owner,
          // inside the sandbox only its private /tmp is writable, and HOME is the session's own
          baseEnv: built === null ? this.ctx.baseEnv : { ...this.ctx.baseEnv, TMPDIR: '/tmp', HOME: built.privateHome },
          sandbox: built === null ? null : net === null ? built.plan : privateNetworkPlan(built.plan, net),
          controlSocketFd: socket?.fd ?? null,
          extraEnv: net === null ? {} : privateNetworkEnv(net),
        });
        this.meta = { ...this.meta, privateNetwork: net !== null };
        this.startedAgentctl = proc;
        return proc;
      } finally {
        await socket?.release();
      }
    })();
    spawning.catch(() => undefined);
    this.spawning = spawning;
    return spawning;
  }

  /**
   * Starts agentctl with `nonce` (or takes the spawn begun earlier), waits for the control port it
   * reports on its pipe, and records it (pid, port). Only that port is ever connected to.
   */
  protected async startAgentctl(nonce: string): Promise<void> {
    const proc = await (this.spawning ?? this.beginSpawn(nonce));
    let report;
    try {
      report = await waitForPortReport(proc.report, proc.exited, { timeoutMs: this.ctx.healthTimeoutMs, ...(this.ctx.req.signal ? { signal: this.ctx.req.signal } : {}) });
      // the socket on that port must be agentctl's own here, or whatever holds it would get the nonce
      // (a private network's control socket is the controller's own, handed to this agentctl alone)
      if (!this.meta.privateNetwork && !listensOn(proc.pid, report.controlPort)) {
        const why = this.ctx.sandbox.kind === 'bubblewrap' && !this.ctx.sandbox.network ? ' (network: false gives the sandbox a loopback of its own, which the controller cannot reach)' : '';
        throw new Error(`agentctl reported port ${report.controlPort}, but its socket is not there on this host's loopback${why}`);
      }
    } catch (err) {
      const tail = agentctlLogTail(this.meta.sessionDir);
      throw new LaunchError(STAGE.agentctlStart, 'AgentctlUnhealthy', `agentctl_start: ${errorMessage(err)}${tail ? ` (log: ${tail})` : ''}`, { cause: err });
    }
    // a private network's ports are the sandbox's own: none is recorded
    const controlPort = this.meta.privateNetwork ? null : report.controlPort;
    this.meta = { ...this.meta, agentctlPid: proc.pid, agentctlProcStart: proc.procStart, controlPort, instancePort: null };
    await this.checkpoint(CHECKPOINT.agentctlStarted);
  }

  /** Waits for the agentctl this launch started, trades the nonce for a token, creates the instance. */
  protected async connectStarted(nonce: string): Promise<void> {
    const proc = this.startedAgentctl;
    if (proc === null) throw new Error('connect before start');
    let port: number;
    try {
      this.endpoint = await openEndpoint(this.meta);
      port = this.endpoint.port;
      await waitHealthy(port, { timeoutMs: this.ctx.healthTimeoutMs, exited: proc.exited, signal: this.ctx.req.signal });
    } catch (err) {
      const tail = agentctlLogTail(this.meta.sessionDir);
      throw new LaunchError(STAGE.agentctlConnect, 'AgentctlUnhealthy', `agentctl_connect: ${errorMessage(err)}${tail ? ` (log: ${tail})` : ''}`, { cause: err });
    }
    const control = controlClient(port);
    this.control = control;
    this.token = await control.handshake(nonce, { signal: this.ctx.req.signal });
    await this.createAgentctlInstance(control);
  }

  protected async createAgentctlInstance(control: ControlClient): Promise<void> {
    const { identity } = this.ctx.req;
    const info = await control.createInstance(
      {
        id: identity.instanceId,
        workspace_path: this.meta.workspacePath,
        env: this.instanceEnv(),
        labels: { session_id: identity.sessionId, task_id: identity.taskId, environment_id: identity.environmentId },
      },
      { signal: this.ctx.req.signal },
    );
    const client = this.instanceClient(control, info);
    await client.health({ signal: this.ctx.req.signal });
    this.client = client;
    this.meta = { ...this.meta, instancePort: info.port };
    await this.checkpoint(CHECKPOINT.agentctlConnected);
  }

  /** The instance's client: on its own port, or on the control endpoint (X-Instance-ID) when that is a relay to the socket. */
  protected instanceClient(control: ControlClient, info: { id: string; port: number }): InstanceClient {
    const shared = this.endpoint?.instanceBaseUrl ?? null;
    return control.instance(info, shared === null ? {} : { baseUrl: shared });
  }

  protected instanceEnv(): Record<string, string> {
    const { req } = this.ctx;
    return {
      ...req.profile.env,
      ...req.env,
      ...req.secretEnv,
      BERTH_SESSION_ID: req.identity.sessionId,
      BERTH_WORKSPACE: this.meta.workspacePath,
    };
  }

  protected instance(secrets: InstanceSecrets, revived: boolean): ExecutorInstance {
    if (this.control === null || this.client === null) throw new Error('launch is not connected');
    return {
      identity: this.ctx.req.identity,
      executor: this.ctx.executorName,
      workspacePath: this.meta.workspacePath,
      metadata: encodeLocalMetadata(this.meta, 'ready'),
      secrets,
      control: this.control,
      client: this.client,
      revived,
      agentctlCommand: agentctlStartCommand(this.ctx.agentctlPath),
      // plain HTTP over loopback: nothing held open between requests but a relay to the control socket
      close: () => this.endpoint?.close() ?? Promise.resolve(),
    };
  }

  /** Stops the agentctl this launch started (if it is still ours), and the sandbox around it. */
  protected async stopStartedAgentctl(): Promise<void> {
    const proc = this.startedAgentctl;
    if (proc === null) return;
    await stopAgentctl({ pid: proc.pid, procStart: proc.procStart, owner: this.owner });
    await waitSandboxGone(this.owner);
  }
}

/** A fresh launch: workspace → agentctl_start → agentctl_connect. */
export class FreshLaunch extends LocalLaunchBase {
  #createdSessionDir = false;
  readonly #nonce = randomBytes(32).toString('hex');

  async launch(): Promise<ExecutorInstance> {
    try {
      await this.stage(STAGE.workspace, () => this.#provisionWorkspace());
      await this.stage(STAGE.agentctlStart, () => this.startAgentctl(this.#nonce), this.sandboxNote);
      await this.stage(STAGE.agentctlConnect, () => this.connectStarted(this.#nonce));
      // `ready` is written by the manager once the token and nonce are stored (spec §4.8).
      return this.instance({ authToken: this.token ?? '', bootstrapNonce: this.#nonce }, true);
    } catch (err) {
      throw await this.#rollback(err);
    }
  }

  async #provisionWorkspace(): Promise<void> {
    // Validate before creating anything: a bad repository needs no rollback.
    validateRepository(this.ctx.req.repository);
    if (existsSync(this.meta.sessionDir)) {
      // A fresh launch only happens without a runtime row: whatever is here is a leftover of this session.
      await removeSessionDir(this.meta.sessionDir);
    }
    mkdirSync(this.meta.sessionDir, { recursive: true, mode: 0o700 });
    this.#createdSessionDir = true;
    this.meta = { ...this.meta, workspaceCreated: true, launchKind: 'fresh' };
    await this.checkpoint(CHECKPOINT.workspaceCreated);
    // agentctl boots while git clones (into the directory made here, which its sandbox binds): it
    // touches the workspace only when the instance is created, after the clone. A crash before its
    // checkpoint leaves a process that stop and recovery find by its owner marker.
    mkdirSync(this.meta.workspacePath);
    void this.beginSpawn(this.#nonce);
    await cloneRepository(this.ctx.req.repository, this.meta.workspacePath, this.meta.sessionDir, this.ctx.req.signal, this.ctx.req.repositoryCredentials);
  }

  /**
   * Undoes what this launch created, each step under the rollback's own deadline (checked before
   * every step and raced against each one: a step still running at the deadline is abandoned and
   * counts as failed). The provisional row is released only when every step succeeded and the
   * session dir is really gone (spec §4.9); otherwise it stays for the next recovery or `rm`.
   */
  async #rollback(launchErr: unknown): Promise<Error> {
    const rb = this.rollback();
    // a spawn still under way is waited for, so that what it started is stopped below
    await rb.step('wait for the agentctl spawn', () => this.spawning?.catch(() => undefined) ?? Promise.resolve());
    await rb.step('kill the clone', () => killLaunchChildren(this.meta.sessionDir));
    await rb.step('close the relay', () => this.endpoint?.close() ?? Promise.resolve());
    await rb.step('stop agentctl', () => this.stopStartedAgentctl());
    if (this.#createdSessionDir) {
      await rb.step(`remove ${this.meta.sessionDir}`, async () => {
        await removeSessionDir(this.meta.sessionDir);
        if (existsSync(this.meta.sessionDir)) throw new Error(`rollback: ${this.meta.sessionDir} still exists after its removal`);
      });
    }
    // The provisional row is released only when everything it records is gone (spec §4.9).
    if (this.ctx.req.releaseRuntimeInventory) {
      const release = this.ctx.req.releaseRuntimeInventory;
      await rb.step('release the runtime row', () => (this.#createdSessionDir && existsSync(this.meta.sessionDir) ? Promise.reject(new Error(`rollback: ${this.meta.sessionDir} is still there`)) : release()));
    }
    if (!rb.clean) this.ctx.log.warn({ session: this.ctx.req.identity.sessionId, errors: rb.errors.map(errorMessage) }, 'rollback incomplete');
    return rb.finish(launchErr);
  }
}

/**
 * Reconnect or revive a recorded instance: try the recorded agentctl with the recorded token; if it
 * is gone, start it again with a fresh nonce and re-create the instance with the same id.
 */
export class ReviveLaunch extends LocalLaunchBase {
  readonly #previous: NonNullable<CreateInstanceRequest['previous']>;

  constructor(ctx: LaunchContext & { previous: NonNullable<CreateInstanceRequest['previous']> }) {
    super(ctx);
    this.#previous = ctx.previous;
    const recorded = decodeLocalMetadata(ctx.previous.metadata);
    if (recorded.instanceId !== ctx.req.identity.instanceId) {
      throw new LaunchError(INIT_STAGE, REASON.instanceMismatch, `local executor: recorded instance ${recorded.instanceId} is not ${ctx.req.identity.instanceId}`);
    }
    this.meta = { ...recorded, launchKind: 'revive', agentctlPath: ctx.agentctlPath };
  }

  async launch(): Promise<ExecutorInstance> {
    const { secrets } = this.#previous;
    try {
      await this.stage(STAGE.workspace, async () => {
        if (!existsSync(this.meta.workspacePath)) {
          throw new LaunchError(STAGE.workspace, 'WorkspaceMissing', `workspace: ${this.meta.workspacePath} no longer exists (remove the session and launch again)`);
        }
      });
      if (await this.#tryRecorded(secrets.authToken)) {
        return this.instance({ ...secrets, authToken: this.token ?? secrets.authToken }, false);
      }
      // a fresh nonce for every agentctl started: the recorded one was readable by what ran before
      const nonce = randomBytes(32).toString('hex');
      await this.stage(STAGE.agentctlStart, () => this.startAgentctl(nonce), this.sandboxNote);
      await this.stage(STAGE.agentctlConnect, () => this.connectStarted(nonce));
      return this.instance({ authToken: this.token ?? '', bootstrapNonce: nonce }, true);
    } catch (err) {
      // Keep the workspace: a failed revive only stops what it started.
      const rb = this.rollback();
      await rb.step('close the relay', () => this.endpoint?.close() ?? Promise.resolve());
      await rb.step('stop agentctl', () => this.stopStartedAgentctl());
      throw rb.finish(err);
    }
  }

  /** Reconnects to the recorded agentctl when it is alive and ours; stops it when it is ours but unusable. */
  async #tryRecorded(token: string): Promise<boolean> {
    const { agentctlPid: pid, controlPort: recordedPort } = this.meta;
    if (pid === null || (recordedPort === null && !this.meta.privateNetwork)) return false;
    const owned = { env: OWNER_ENV, value: this.owner, procStart: this.meta.agentctlProcStart };
    if (!isOurProcess(pid, owned)) return false;
    return this.stage(STAGE.agentctlConnect, async () => {
      try {
        // the token (and, for a lost instance, the secret env) goes only to agentctl's own socket:
        // while it is not listening (shutting down) another process could have taken the port (the
        // control socket of a private network lies where only the controller can reach it)
        if (recordedPort !== null && !listensOn(pid, recordedPort)) throw new Error(`agentctl pid ${pid} does not listen on its recorded port ${recordedPort}`);
        this.endpoint = await openEndpoint(this.meta);
        const { port } = this.endpoint;
        const control = controlClient(port, token);
        await waitHealthy(port, { timeoutMs: 3000, signal: this.ctx.req.signal });
        let info;
        try {
          info = await control.getInstance(this.meta.instanceId, { signal: this.ctx.req.signal });
        } catch (err) {
          if (!(isAgentctlHttpError(err) && err.status === 404)) throw err;
          this.control = control;
          this.token = token;
          await this.createAgentctlInstance(control);
          return true;
        }
        this.control = control;
        this.token = token;
        this.client = this.instanceClient(control, info);
        await this.client.health({ signal: this.ctx.req.signal });
        this.meta = { ...this.meta, instancePort: info.port };
        return true;
      } catch (err) {
        // Alive but unusable (token rejected, hung): stop it and start a fresh one with a new nonce.
        this.ctx.log.warn({ session: this.ctx.req.identity.sessionId, pid, err: sanitize(errorMessage(err)) }, 'recorded agentctl unusable; restarting it');
        await this.endpoint?.close();
        this.endpoint = null;
        await stopAgentctl({ pid, procStart: this.meta.agentctlProcStart, owner: this.owner });
        this.control = null;
        this.client = null;
        return false;
      }
    });
  }
}
