/**
 * Building the controller: open the inventory, resolve the config, instantiate the executors and
 * return the session service (plus `recover`, to be called once at start-up).
 * @module
 */
import { resolve } from 'node:path';
import { loadConfig, type ResolvedConfig } from '../config/index.js';
import { createExecutors, metadataKeyPrefixes, profileSnapshot, type ExecutorDeps } from './executor-factory.js';
import { InventoryStore } from '../inventory/index.js';
import { KeyedLock } from '../shared/locks.js';
import { silentLogger, type Logger } from '../shared/logger.js';
import { SessionEvents } from './events.js';
import { testHooksFromEnv, type TestHooks } from './hooks.js';
import { LiveSessions } from './live.js';
import { SessionManager } from './manager.js';
import { newControllerRunId } from './shell.js';
import type { SessionConversationService, SessionService, SessionWorkspaceService } from './service.js';

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
  /** The controller environment: source of approved secret env values and of the test hooks. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
}

export type Controller = SessionService & SessionWorkspaceService & SessionConversationService & { recover(): Promise<void> };

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
  const store = InventoryStore.open({ dataDir, metadataKeyPrefixes: metadataKeyPrefixes() });
  const deps: ExecutorDeps = { dataDir, logger, env, ...(opts.agentctlPath !== undefined ? { agentctlPath: opts.agentctlPath } : {}) };
  const executors = createExecutors(config, deps);
  const events = new SessionEvents((err) => logger.warn({ err: String(err) }, 'event listener threw'));
  return new SessionManager({
    store,
    config,
    executors,
    events,
    live: new LiveSessions(),
    locks: new KeyedLock(),
    log: logger,
    hooks: opts.testHooks ?? testHooksFromEnv(env),
    // own variables only: `constructor` is no variable of the environment
    secretSource: (name) => (Object.hasOwn(env, name) ? env[name] : undefined),
    runId: newControllerRunId(),
    snapshotProfile: (name) => profileSnapshot(config, name, deps),
  });
}
