/**
 * Building the controller: open the inventory, resolve the config, instantiate the executors and
 * return the session service (plus `recover`, to be called once at start-up).
 * @module
 */
import { egressSocketPath } from '../executors/network.js';
import { startEgressProxy } from './egress-proxy.js';
import { resolve } from 'node:path';
import { loadConfig, type ResolvedConfig } from '../config/index.js';
import { createExecutors, metadataKeyPrefixes, profileSnapshot, type ExecutorDeps } from './executor-factory.js';
import { openInventory, timeInventory, type Inventory, type InventoryFence } from '../inventory/index.js';
import { KeyedLock } from '../shared/locks.js';
import { silentLogger, type Logger } from '../shared/logger.js';
import { SessionEvents } from './events.js';
import { testHooksFromEnv, type TestHooks } from './hooks.js';
import { LiveSessions } from './live.js';
import { SessionManager } from './manager.js';
import { newControllerRunId } from './shell.js';
import type { SessionConversationService, SessionPoolService, SessionService, SessionWorkspaceService } from './service.js';

interface ControllerOptions {
  /** The data dir: `berth.db`, `secret.key`, `berth.yaml` (optional) and `workspaces/`. */
  dataDir: string;
  /** A resolved config; default: `loadConfig({ dataDir })` (built-in defaults when there is no berth.yaml). */
  config?: ResolvedConfig;
  logger?: Logger;
  /** Overrides the agentctl bundle of every local executor (tests, dev builds). */
  agentctlPath?: string;
  /**
   * Test hooks; default: read from `env` (`BERTH_TEST_HOOKS=1` + `BERTH_TEST_CRASH_AT=<checkpoint>`).
   */
  testHooks?: TestHooks;
  /** The controller environment: source of approved secret env values, the store's connection and the test hooks. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /**
   * The leader's Lease claim: the store refuses this controller's writes once a newer one is
   * claimed (InventoryFencedError). Absent: one controller, writes unchecked.
   */
  fence?: InventoryFence;
  /** Called with every store call's duration (the store latency metric). */
  observeStore?: (op: string, seconds: number, ok: boolean, backend: Inventory['backend']) => void;
}

export type Controller = SessionService & SessionWorkspaceService & SessionConversationService & SessionPoolService & { recover(): Promise<void> };

/**
 * Creates the controller. Throws InventoryOpenError (data dir not writable), ConfigFieldError /
 * ConfigFileError (bad berth.yaml). Call `recover()` once after creating it to reconnect running
 * sessions and clean up launches cut short by a restart.
 */
export async function createController(opts: ControllerOptions): Promise<Controller> {
  const dataDir = resolve(opts.dataDir);
  const env = opts.env ?? process.env;
  const config = opts.config ?? loadConfig({ dataDir });
  const logger = opts.logger ?? silentLogger;
  const store = await openStore(dataDir, config, env, opts);
  // replicas sharing a Postgres inventory stamp one installation id (a new leader sweeps what the old one created)
  const installationId = store.backend === 'postgres' ? await store.installationId() : undefined;
  const deps: ExecutorDeps = {
    dataDir,
    logger,
    env,
    ...(opts.agentctlPath !== undefined ? { agentctlPath: opts.agentctlPath } : {}),
    ...(installationId !== undefined ? { installationId } : {}),
  };
  const executors = createExecutors(config, deps);
  const events = new SessionEvents((err) => logger.warn({ err: String(err) }, 'event listener threw'));
  // own variables only: `constructor` is no variable of the environment
  const secretSource = (name: string): string | undefined => (Object.hasOwn(env, name) ? env[name] : undefined);
  const egressProxy = await startEgressProxy(config, store, secretSource, logger, { socketPath: egressSocketPath(dataDir) }).catch(async (err: unknown) => {
    await store.close();
    throw new Error(`egress.listen: the egress proxy cannot listen (${(err as Error).message})`, { cause: err });
  });
  return new SessionManager({
    store,
    config,
    executors,
    events,
    live: new LiveSessions(),
    locks: new KeyedLock(),
    log: logger,
    hooks: opts.testHooks ?? testHooksFromEnv(env),
    secretSource,
    egressProxy,
    runId: newControllerRunId(),
    snapshotProfile: (name) => profileSnapshot(config, name, deps),
  });
}

/** Opens the configured inventory (timed, when asked) and claims the leader's fence on it. */
async function openStore(dataDir: string, config: ResolvedConfig, env: Readonly<Record<string, string | undefined>>, opts: ControllerOptions): Promise<Inventory> {
  const opened = await openInventory({ dataDir, store: config.store, env, metadataKeyPrefixes: metadataKeyPrefixes() });
  const observe = opts.observeStore;
  const store = observe ? timeInventory(opened, (op, seconds, ok) => observe(op, seconds, ok, opened.backend)) : opened;
  if (opts.fence !== undefined && !(await store.claimFence(opts.fence))) {
    await store.close();
    throw new Error(`inventory: a newer leader than this controller's claim (holder '${opts.fence.holder}', generation ${opts.fence.generation}) is recorded in the store; this replica steps down`);
  }
  return store;
}
