/**
 * The local executor (the embedded default): a workspace directory under the data dir and a local
 * agentctl started as a detached child. Fresh launches run the stages `workspace`, `agentctl_start`
 * and `agentctl_connect`; a reconnect uses the recorded port and token and, when agentctl died,
 * starts it again with a fresh nonce.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { userInfo } from 'node:os';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { KeyedLock } from '../../shared/locks.js';
import { silentLogger, type Logger } from '../../shared/logger.js';
import { errorMessage } from '../../shared/errors.js';
import type {
  CreateInstanceRequest,
  Executor,
  ExecutorInstance,
  InstanceStatus,
  RecordedOutputChunk,
  RefreshRequest,
  StopOptions,
  StopTarget,
} from '../executor.js';
import { INIT_STAGE, LaunchError, ROLLBACK_TIMEOUT_MS } from '../launch-kit/index.js';
// The one agentctl module the controller side reads: a pure, read-only reader of its process records.
import { readRecordedOutput } from '../../agentctl/processes/recorded-output.js';
import { agentctlBaseEnv, stopAgentctl } from './agentctl-process.js';
import { probeEndpoint } from './control-socket.js';
import { FILES, OWNER_ENV } from './constants.js';
import { probeReadablePaths } from './credential-probe.js';
import { FreshLaunch, ReviveLaunch } from './launch.js';
import { decodeLocalMetadata } from './metadata.js';
import { findProcessesByEnv, isOurProcess, procComm } from './proc.js';
import { resolveLaunchSandbox, SandboxUnavailableError, type LaunchSandbox, type SandboxMode } from './sandbox.js';
import { CREDENTIAL_PATHS, credentialCandidates, hiddenPaths } from './sandbox-paths.js';
import { buildSandboxPlan } from './sandbox-plan.js';
import { killLaunchChildren, removeSessionDir } from './workspace.js';

export interface LocalExecutorOptions {
  /** Name of the executor entry in the config. @default 'local' */
  name?: string;
  /** The data dir; workspaces live in `<dataDir>/workspaces/<sessionId>`. */
  dataDir: string;
  /** The agentctl bundle (`dist/agentctl.cjs`). */
  agentctlPath: string;
  logger?: Logger;
  /** Base environment of agentctl and its processes. @default the base names (`CHILD_BASE_ENV`) of process.env */
  env?: NodeJS.ProcessEnv;
  /** How long agentctl may take to answer /health after start, in ms. @default 20000 */
  healthTimeoutMs?: number;
  /** `auto`: bubblewrap where it works, else none with a warning on every launch. @default 'auto' */
  sandbox?: SandboxMode;
  /** Share the host network with the sandbox (`false`: loopback only). @default true */
  network?: boolean;
  /** Paths the sandbox must keep visible (read-only) though they lie under /tmp or the data dir: agent commands. @default [] */
  sandboxReadOnlyPaths?: readonly string[];
  /**
   * Absolute paths the sandbox hides besides its defaults (the user's homes, /root, /run/secrets,
   * the data dir): `sandbox_hide`, the kubeconfigs, Berth's config. @default []
   */
  sandboxHide?: readonly string[];
  /** Absolute paths shown read-only (`sandbox_expose`), also in the private home when inside the user's home. @default [] */
  sandboxExpose?: readonly string[];
  /** The user's home directories (hidden, and where exposed paths are mirrored from). @default $HOME of `env` and the account's home */
  homes?: readonly string[];
  /** The rollback's own deadline, in ms (tests). @default ROLLBACK_TIMEOUT_MS of the launch kit */
  rollbackTimeoutMs?: number;
  /**
   * The Unix socket of `berth serve`'s egress proxy on this host: bound into the sandbox of a session
   * whose network policy uses the proxy (private-network.ts). @default null (such a launch fails)
   */
  egressSocket?: string | null;
}

export class LocalExecutor implements Executor {
  /** A workspace directory cloned on this host: it needs a repository, and its URLs name this host's files and network. */
  static readonly capabilities: Executor['capabilities'] = { repositoryOptional: false, clonesOnControllerHost: true, metadataKeyPrefix: 'local_', removes: "the session's workspace directory, with every uncommitted change in it" };
  readonly capabilities = LocalExecutor.capabilities;
  readonly name: string;
  readonly #opts: Required<Omit<LocalExecutorOptions, 'name'>>;
  readonly #locks = new KeyedLock();
  /** Decided at the first launch (one bubblewrap probe per process). */
  #sandbox: LaunchSandbox | SandboxUnavailableError | undefined;

  constructor(opts: LocalExecutorOptions) {
    this.name = opts.name ?? 'local';
    this.#opts = {
      dataDir: resolve(opts.dataDir),
      agentctlPath: opts.agentctlPath,
      logger: opts.logger ?? silentLogger,
      env: opts.env ?? agentctlBaseEnv(process.env),
      healthTimeoutMs: opts.healthTimeoutMs ?? 20_000,
      sandbox: opts.sandbox ?? 'auto',
      network: opts.network ?? true,
      sandboxReadOnlyPaths: opts.sandboxReadOnlyPaths ?? [],
      sandboxHide: opts.sandboxHide ?? [],
      sandboxExpose: opts.sandboxExpose ?? [],
      homes: opts.homes ?? userHomes(opts.env ?? process.env),
      rollbackTimeoutMs: opts.rollbackTimeoutMs ?? ROLLBACK_TIMEOUT_MS,
      egressSocket: opts.egressSocket ?? null,
    };
  }

  /** The sandbox of this executor's launches (throws when an explicit `bubblewrap` cannot work). */
  #launchSandbox(): LaunchSandbox {
    if (this.#sandbox === undefined) {
      try {
        this.#sandbox = resolveLaunchSandbox({ mode: this.#opts.sandbox, ...this.#sandboxSettings() });
      } catch (err) {
        if (!(err instanceof SandboxUnavailableError)) throw err;
        this.#sandbox = err;
      }
    }
    if (this.#sandbox instanceof SandboxUnavailableError) {
      throw new LaunchError('agentctl_start', 'SandboxUnavailable', `local executor ${this.name}: ${this.#sandbox.message}`, { cause: this.#sandbox });
    }
    return this.#sandbox;
  }

  /**
   * What a sandbox of this executor hides and shows. Hidden: the whole data dir (the inventory, its
   * key, the API token and every other session), the user's homes, /root, /run/secrets, the
   * credential places of each home (so exposing a parent such as ~/.config does not show ~/.config/gh;
   * naming one in `sandbox_expose` shows it) and the configured extras (kubeconfigs, Berth's config,
   * `sandbox_hide`), which always win.
   */
  #sandboxSettings(): Omit<Extract<LaunchSandbox, { kind: 'bubblewrap' }>, 'kind'> {
    const { homes, sandboxExpose: expose } = this.#opts;
    const credentials = homes.flatMap((h) => CREDENTIAL_PATHS.map((rel) => join(h, rel))).filter((p) => !expose.includes(p));
    return {
      network: this.#opts.network,
      hide: hiddenPaths({ homes, dataDir: this.#opts.dataDir, extra: [...credentials, ...this.#opts.sandboxHide] }),
      // the agentctl start files are added per launch (sandbox-plan.ts)
      readOnly: [process.execPath, ...this.#opts.sandboxReadOnlyPaths],
      expose,
      homes,
    };
  }

  /**
   * The credential-like paths an agent of this executor could read (`berth doctor`): a probe runs in
   * the sandbox a launch would build, for a throwaway session dir under the workspaces root (so the
   * same paths are bound), and checks each credential place of the user's homes and of the private
   * home plus every hidden path; where agents run unconfined, the probe runs unconfined too. Paths
   * in the private home are given as `<private home>/…`.
   */
  readableCredentials(): { sandboxed: boolean; readable: string[] } {
    const sandbox = this.#launchSandbox();
    const settings = this.#sandboxSettings();
    if (sandbox.kind === 'none') {
      return { sandboxed: false, readable: probeReadablePaths(credentialCandidates({ homes: settings.homes, hidden: settings.hide }), { plan: null, env: this.#opts.env }) };
    }
    const dir = join(this.workspacesRoot, `.doctor-${randomBytes(6).toString('hex')}`);
    try {
      mkdirSync(join(dir, FILES.repo), { recursive: true, mode: 0o700 });
      const { plan, privateHome } = buildSandboxPlan(sandbox, { sessionDir: dir, workspacePath: join(dir, FILES.repo), agentctlPath: this.#opts.agentctlPath });
      const candidates = credentialCandidates({ homes: [...settings.homes, privateHome], hidden: settings.hide });
      const readable = probeReadablePaths(candidates, { plan, env: { ...this.#opts.env, HOME: privateHome, TMPDIR: '/tmp' } });
      return { sandboxed: true, readable: readable.map((p) => (p.startsWith(`${privateHome}/`) ? `<private home>${p.slice(privateHome.length)}` : p)) };
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
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
      return Promise.reject(new LaunchError(INIT_STAGE, 'InvalidRequest', 'local executor: request identity is incomplete'));
    }
    const common = {
      req,
      executorName: this.name,
      sessionDir: this.sessionDir(req.identity.sessionId),
      agentctlPath: this.#opts.agentctlPath,
      baseEnv: this.#opts.env,
      healthTimeoutMs: this.#opts.healthTimeoutMs,
      rollbackTimeoutMs: this.#opts.rollbackTimeoutMs,
      egressSocket: this.#opts.egressSocket,
      log: this.#opts.logger,
    };
    return this.#locks.run(req.identity.instanceId, async () => {
      const launch = { ...common, sandbox: this.#launchSandbox() };
      if (req.previous === undefined) return new FreshLaunch(launch).launch();
      return new ReviveLaunch({ ...launch, previous: req.previous }).launch();
    });
  }

  refreshInstance(instance: ExecutorInstance, req: RefreshRequest): Promise<ExecutorInstance> {
    return this.createInstance({
      identity: instance.identity,
      repository: {},
      env: req.env,
      secretEnv: req.secretEnv,
      profile: req.profile,
      previous: { metadata: instance.metadata, secrets: instance.secrets },
      onStage: req.onStage,
      checkpointRuntimeInventory: req.checkpointRuntimeInventory,
      ...(req.signal ? { signal: req.signal } : {}),
    });
  }

  async status(target: StopTarget): Promise<InstanceStatus> {
    const meta = decodeLocalMetadata(target.metadata);
    if (!existsSync(meta.workspacePath)) return { liveness: 'missing', detail: `workspace ${meta.workspacePath} is gone` };
    const owner = { env: OWNER_ENV, value: ownerValue(meta.sessionDir, meta.instanceId), procStart: meta.agentctlProcStart };
    if (meta.agentctlPid === null || !isOurProcess(meta.agentctlPid, owner)) return { liveness: 'stopped', detail: 'agentctl is not running' };
    const where = meta.privateNetwork === true ? `its control socket (no network of its own)` : `port ${meta.controlPort ?? '?'}`;
    if (!(await probeEndpoint(meta))) return { liveness: 'unreachable', detail: `agentctl pid ${meta.agentctlPid} does not answer on ${where}` };
    return { liveness: 'running', detail: `agentctl pid ${meta.agentctlPid} on ${where}` };
  }

  stopInstance(target: StopTarget, opts: StopOptions): Promise<void> {
    return this.#locks.run(target.identity.instanceId, async () => {
      const meta = decodeLocalMetadata(target.metadata);
      const owner = ownerValue(meta.sessionDir, meta.instanceId);
      const errors: unknown[] = [];
      const pids = new Set<number>();
      if (meta.agentctlPid !== null) pids.add(meta.agentctlPid);
      // a launch cut short between spawn and checkpoint has no recorded pid: find it by our marker
      // (agentctl itself first: the bwrap processes around it end with it)
      for (const pid of findProcessesByEnv(OWNER_ENV, owner).sort((a, b) => Number(procComm(a) === 'bwrap') - Number(procComm(b) === 'bwrap'))) pids.add(pid);
      try {
        // a clone the dead controller started must be gone before anything is called undone
        await killLaunchChildren(meta.sessionDir);
      } catch (err) {
        errors.push(err);
      }
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
    const dir = this.#safeSessionDir(this.sessionDir(sessionId), sessionId);
    await killLaunchChildren(dir);
    await removeSessionDir(dir);
  }

  /**
   * Reads an agent's output from `<sessionDir>/agentctl-state/<instanceId>` (the state dir the
   * local agentctl was started with), so `berth logs` works while the session is stopped.
   */
  async readRecordedOutput(target: StopTarget, processId: string, from: number): Promise<RecordedOutputChunk[] | null> {
    const meta = decodeLocalMetadata(target.metadata);
    const sessionDir = this.#safeSessionDir(meta.sessionDir, target.identity.sessionId);
    // the state dir is the agent's to write: nothing below the workspaces root is trusted
    const recorded = await readRecordedOutput(this.workspacesRoot, join(sessionDir, FILES.agentctlState, meta.instanceId), processId, from);
    return recorded === null ? null : recorded.chunks.map((c) => ({ seq: c.seq, stream: c.stream, data: c.data }));
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

/** $HOME of `env` and the account's home directory (when they differ), absolute ones only. */
export function userHomes(env: Readonly<Record<string, string | undefined>>): string[] {
  const homes = new Set<string>();
  if (env.HOME !== undefined && isAbsolute(env.HOME)) homes.add(resolve(env.HOME));
  try {
    const account = userInfo().homedir;
    if (isAbsolute(account)) homes.add(resolve(account));
  } catch {
    // no passwd entry (a container's arbitrary uid): $HOME is all there is
  }
  homes.delete('/');
  return [...homes];
}

function ownerValue(sessionDir: string, instanceId: string): string {
  return `${sessionDir}#${instanceId}`;
}

