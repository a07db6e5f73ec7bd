/**
 * A ManagerContext for the controller's unit tests: the real SQLite inventory in a temp data dir
 * (opened with the fake executor's metadata prefix), a real event bus whose events are recorded,
 * the checkpoints the launch passes recorded in order, and the given executors.
 * @module
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResolvedConfig } from '../../config/index.js';
import type { Executor, ExecutorProfileSnapshot } from '../../executors/executor.js';
import { InventoryStore, type SessionRecord } from '../../inventory/index.js';
import { KeyedLock } from '../../shared/locks.js';
import { silentLogger } from '../../shared/logger.js';
import type { ManagerContext } from '../context.js';
import { SessionEvents } from '../events.js';
import { LiveSessions } from '../live.js';
import type { SessionEvent } from '../service.js';
import { FAKE_METADATA_PREFIX } from './fake-executor.js';

export interface TestContext {
  ctx: ManagerContext;
  store: InventoryStore;
  dataDir: string;
  /** Every event emitted, in order. */
  events: SessionEvent[];
  /** Every checkpoint reached (`reachedCheckpoint`), in order. */
  checkpoints: string[];
  /** Closes the inventory and removes the data dir. */
  dispose(): void;
}

interface TestContextOptions {
  executors: readonly Executor[];
  /** Serve's environment: the values of approved secret env names. @default {} */
  secrets?: Readonly<Record<string, string>>;
  /** @default an empty config (SessionLaunch reads none; pass one for the manager) */
  config?: ResolvedConfig;
  /** @default one that throws (SessionLaunch uses the profile recorded on the session) */
  snapshotProfile?: (name: string) => ExecutorProfileSnapshot;
}

export function testContext(opts: TestContextOptions): TestContext {
  const dataDir = mkdtempSync(join(tmpdir(), 'berth-controller-'));
  const store = InventoryStore.open({ dataDir, metadataKeyPrefixes: [FAKE_METADATA_PREFIX] });
  const bus = new SessionEvents();
  const events: SessionEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const checkpoints: string[] = [];
  const secrets = opts.secrets ?? {};
  const ctx: ManagerContext = {
    store,
    config: opts.config ?? ({} as ResolvedConfig),
    executors: new Map(opts.executors.map((e) => [e.name, e])),
    events: bus,
    live: new LiveSessions(),
    locks: new KeyedLock(),
    log: silentLogger,
    hooks: { onCheckpoint: (name) => checkpoints.push(name) },
    secretSource: (name) => (Object.hasOwn(secrets, name) ? secrets[name] : undefined),
    runId: 'test-run',
    snapshotProfile:
      opts.snapshotProfile ??
      ((name) => {
        throw new Error(`no profile snapshot for '${name}' in this test`);
      }),
  };
  return {
    ctx,
    store,
    dataDir,
    events,
    checkpoints,
    dispose: () => {
      void store.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Inserts a session at `launching` on executor `executor` (as the manager's launch does). */
export function insertTestSession(store: InventoryStore, opts: { id?: string; executor?: string; secretEnv?: string[]; prompt?: string } = {}): Promise<SessionRecord> {
  const executor = opts.executor ?? 'fake';
  return store.insertSession({
    id: opts.id ?? 's-test',
    name: null,
    executor,
    agent: 'test-agent',
    repository: { path: '/repo' },
    request: {
      env: { FOO: 'bar' },
      secretEnv: opts.secretEnv ?? [],
      prompt: opts.prompt ?? 'do it',
      agentCommand: ['agent', '--prompt', opts.prompt ?? 'do it'],
      agentEnv: {},
      profileEnv: {},
      profile: { executor, profile: null, type: 'local', settings: {}, env: {} },
    },
    state: 'launching',
    error: null,
    stages: [],
    workspacePath: null,
  });
}
