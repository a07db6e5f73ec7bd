/**
 * The instances of this agentctl: create (idempotent per id and workspace), list, get, delete.
 * Each instance owns a process supervisor and an HTTP server on a port from the configured list.
 * @module
 */
import { realpath, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import type { Logger } from 'pino';
import type { CreateInstanceRequestSchema, InstanceInfo } from '../protocol/index.js';
import type { z } from 'zod';
import type { Auth } from './auth.js';
import type { ResolvedAgentctlConfig } from './config.js';
import { protocolError } from './errors.js';
import { InstanceServer } from './instance-server.js';
import { KeyedLock } from '../shared/locks.js';
import { ProcessSupervisor } from './processes/supervisor.js';
import { sweepScope, sweepSessionProcesses } from './processes/sweep.js';
import { instanceStateDir } from './state-dir.js';

type CreateRequest = z.output<typeof CreateInstanceRequestSchema>;

interface Instance {
  info: InstanceInfo;
  readonly server: InstanceServer;
  readonly processes: ProcessSupervisor;
  /** The instance env (its `BERTH_SESSION_ID` marks the session's processes, see sweep.ts). */
  readonly env: Readonly<Record<string, string>>;
}

export class InstanceManager {
  readonly #instances = new Map<string, Instance>();
  readonly #lock = new KeyedLock();
  #closing = false;

  constructor(
    private readonly config: ResolvedAgentctlConfig,
    private readonly auth: Auth,
    private readonly log: Logger,
  ) {}

  list(): InstanceInfo[] {
    return [...this.#instances.values()].map((i) => i.info);
  }

  get(id: string): InstanceInfo {
    const instance = this.#instances.get(id);
    if (instance === undefined) throw protocolError('not_found', `no instance ${id}`);
    return instance.info;
  }

  /** The server of a running instance, for a request that names it on the control port; undefined when there is none. */
  server(id: string): InstanceServer | undefined {
    const instance = this.#instances.get(id);
    return instance?.info.status === 'running' ? instance.server : undefined;
  }

  /** Creates an instance, or returns the existing one for the same id and workspace (`created: false`). */
  create(request: CreateRequest): Promise<{ created: boolean; info: InstanceInfo }> {
    return this.#lock.run(request.id, async () => {
      if (!isAbsolute(request.workspace_path)) throw protocolError('bad_request', 'workspace_path: must be an absolute path');
      const workspacePath = resolve(request.workspace_path);
      const existing = this.#instances.get(request.id);
      if (existing !== undefined) {
        if (existing.info.workspace_path !== workspacePath) {
          throw protocolError('conflict', `instance ${request.id} already exists with another workspace`);
        }
        return { created: false, info: existing.info };
      }
      if (this.#closing) throw protocolError('unavailable', 'agentctl is shutting down');
      return { created: true, info: await this.#start(request, workspacePath) };
    });
  }

  async #start(request: CreateRequest, workspacePath: string): Promise<InstanceInfo> {
    const st = await stat(workspacePath).catch(() => null);
    if (st === null) throw protocolError('bad_request', `workspace_path: ${workspacePath} does not exist`);
    if (!st.isDirectory()) throw protocolError('not_a_directory', `workspace_path: ${workspacePath} is not a directory`);
    const workspace = { realRoot: await realpath(workspacePath), declaredRoot: workspacePath };
    const log = this.log.child({ instance: request.id });
    const processes = new ProcessSupervisor({
      workspace,
      stateRoot: await instanceStateDir(this.config.stateDir, workspace.realRoot, request.id),
      instanceEnv: request.env,
      maxProcesses: this.config.maxProcesses,
      maxOutputBytes: this.config.maxOutputBytes,
      stopGraceMs: this.config.stopGraceMs,
      log,
    });
    const server = new InstanceServer({ id: request.id, workspace, processes }, this.auth, log);
    const port = await this.#bind(server);
    const info: InstanceInfo = {
      id: request.id,
      port,
      workspace_path: workspacePath,
      status: 'running',
      created_at: new Date().toISOString(),
      labels: request.labels,
    };
    this.#instances.set(request.id, { info, server, processes, env: request.env });
    log.info({ port, workspace: workspacePath }, 'instance created');
    return info;
  }

  /** Tries the configured ports in order, skipping ports in use (by us or anyone else); 0 takes any free port. */
  async #bind(server: InstanceServer): Promise<number> {
    const taken = new Set(this.list().map((i) => i.port));
    for (const port of this.config.instancePorts) {
      if (taken.has(port)) continue;
      try {
        return await server.listen(port);
      } catch (err) {
        this.log.debug({ port, err }, 'instance port unavailable');
      }
    }
    throw protocolError('unavailable', 'no free port left in the instance port range');
  }

  /**
   * Stops the instance's processes (SIGTERM, then SIGKILL after the grace) and closes its server;
   * then ends what the session started outside those process groups (`setsid`, `nohup … &`; see
   * processes/sweep.ts for which processes count as the session's).
   *
   * The state directory (process records and output logs) is deliberately kept: re-creating the
   * same id lists those processes again (as exited) with their output replayable. That is what a
   * controller needs when it re-creates its instances after an agentctl restart, and deleting an
   * instance is not a way to wipe the workspace. Removing `<workspace>/.agentctl` (or the
   * instance's directory under AGENTCTL_STATE_DIR) is the caller's decision.
   */
  delete(id: string): Promise<void> {
    return this.#lock.run(id, async () => {
      const instance = this.#instances.get(id);
      if (instance === undefined) throw protocolError('not_found', `no instance ${id}`);
      instance.info = { ...instance.info, status: 'stopping' };
      await instance.processes.stopAll();
      await instance.server.close();
      const scope = sweepScope(instance.env, this.#instances.size === 1);
      if (scope !== null) {
        try {
          const ended = await sweepSessionProcesses({ scope, graceMs: Math.min(this.config.stopGraceMs, 3000) });
          if (ended > 0) this.log.info({ instance: id, ended, scope: scope.kind }, 'ended processes the session left behind');
        } catch (err) {
          this.log.warn({ instance: id, err }, 'ending the processes the session left behind failed');
        }
      }
      this.#instances.delete(id);
      this.log.info({ instance: id }, 'instance deleted');
    });
  }

  /** Deletes every instance; later creates are refused. */
  async stopAll(): Promise<void> {
    this.#closing = true;
    await Promise.all([...this.#instances.keys()].map((id) => this.delete(id).catch(() => undefined)));
  }
}
