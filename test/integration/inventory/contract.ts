/**
 * The inventory contract: what every backend (SQLite, Postgres) must do alike, as the controller
 * relies on it. One set of cases, run by sqlite.test.ts and postgres.test.ts against a factory.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { InventoryConflictError, InventoryDuplicateError, InventoryFencedError, InventoryMetadataError, SecretStoreError } from '../../../src/inventory/errors.js';
import type { Inventory, RuntimeUpsert } from '../../../src/inventory/inventory.js';
import type { SessionRecord } from '../../../src/inventory/records.js';
import { egressContract } from './egress-contract.js';
import { recordedOutputContract } from './output-contract.js';
import { poolMemberContract } from './pool-contract.js';

/** One empty database of the backend under test. */
export interface ContractDatabase {
  /** Opens a store on this database; a second open is a second controller on the same data. */
  open(opts?: { now?: () => Date }): Promise<Inventory>;
  /** Everything the backend holds, as text (leak checks). */
  dump(): Promise<string>;
  /** The number of rows of a table, read directly. */
  count(table: string): Promise<number>;
  /**
   * Takes the backend down and up again between writes: the store to go on with (Postgres: the
   * same one, which must reconnect by itself; SQLite: the reopened file).
   */
  restart(store: Inventory): Promise<Inventory>;
}

type NewSession = Omit<SessionRecord, 'createdAt' | 'updatedAt'>;

export function session(id = 's-1', extra: Partial<NewSession> = {}): NewSession {
  return {
    id,
    name: null,
    executor: 'local',
    agent: 'demo',
    repository: { path: '/r' },
    request: { env: {}, secretEnv: [], prompt: null, agentCommand: ['x'], agentEnv: {}, profileEnv: {} },
    state: 'launching',
    error: null,
    stages: [],
    workspacePath: null,
    ...extra,
  };
}

export const runtime: RuntimeUpsert = { sessionId: 's-1', instanceId: 'i-1', executor: 'local', state: 'workspace_created', metadata: {}, stages: [], secretRefs: {} };

const FULL: NewSession = session('s-full', {
  name: 'full',
  repository: { url: 'https://example.test/r.git', branch: 'main', credentials: true },
  request: {
    env: { B: '2', A: '1' },
    secretEnv: ['TOKEN'],
    prompt: 'do it',
    agentCommand: ['agent', '--go'],
    agentEnv: { HOME: '/h' },
    promptInput: 'stdin',
    protocol: 'acp',
    approve: 'auto-edits',
    agentState: 'st',
    loginFiles: [{ host: '~/.x', state: 'x' }],
    stateFiles: [{ path: 'c.json', content: '{}' }],
    profileEnv: { P: 'p' },
    profile: { executor: 'local', profile: null, type: 'local', settings: { a: 'b' }, env: {} },
  },
  error: { message: 'boom', stage: 'clone' },
  stages: [{ name: 'clone', status: 'failed', startedAt: '2026-01-01T00:00:00.000Z', endedAt: null, durationMs: null, reason: 'x', message: 'ünïcode ✓', waits: [] }],
  workspacePath: '/w',
});

export function inventoryContract(backend: string, fresh: () => Promise<ContractDatabase>): void {
  const opened: Inventory[] = [];
  afterEach(async () => {
    for (const s of opened.splice(0)) await s.close();
  });
  async function openFresh(opts?: { now?: () => Date }): Promise<{ db: ContractDatabase; store: Inventory }> {
    const db = await fresh();
    const store = await db.open(opts);
    opened.push(store);
    return { db, store };
  }
  async function another(db: ContractDatabase): Promise<Inventory> {
    const store = await db.open();
    opened.push(store);
    return store;
  }

  describe(`inventory contract: ${backend}`, () => {
    it('names its backend and its schema version', async () => {
      const { store } = await openFresh();
      expect(store.backend).toBe(backend);
      expect(await store.schemaVersion()).toBe(6);
    });

    it('round-trips a session with every field, and lists sessions oldest first', async () => {
      let t = Date.parse('2026-01-01T00:00:00.000Z');
      const { store } = await openFresh({ now: () => new Date((t += 1000)) });
      const first = await store.insertSession(FULL);
      expect(first).toEqual({ ...FULL, createdAt: '2026-01-01T00:00:01.000Z', updatedAt: '2026-01-01T00:00:01.000Z' });
      await store.insertSession(session('a-second'));
      expect(await store.getSession('s-full')).toEqual(first);
      expect((await store.listSessions()).map((s) => s.id)).toEqual(['s-full', 'a-second']);
      expect(await store.getSession('missing')).toBeNull();
    });

    it('returns the stored session on a repeated identical insert, and refuses a different one under the same id', async () => {
      const { store } = await openFresh();
      const first = await store.insertSession(FULL);
      expect(await store.insertSession({ ...FULL, request: { ...FULL.request, env: { A: '1', B: '2' } } })).toEqual(first);
      await expect(store.insertSession({ ...FULL, state: 'ready' })).rejects.toThrow(InventoryDuplicateError);
      expect(await store.getSession('s-full')).toEqual(first);
    });

    it('updates the mutable fields with a newer updatedAt (even within one millisecond); null for a missing session', async () => {
      const fixed = new Date('2026-02-02T00:00:00.000Z');
      const { store } = await openFresh({ now: () => fixed });
      const created = await store.insertSession(session());
      const updated = await store.updateSession('s-1', { state: 'ready', name: 'n', workspacePath: '/w', error: null });
      expect(updated).toMatchObject({ state: 'ready', name: 'n', workspacePath: '/w', createdAt: created.createdAt });
      expect(updated!.updatedAt > created.updatedAt).toBe(true);
      expect(await store.getSession('s-1')).toEqual(updated);
      expect(await store.updateSession('nope', { state: 'ready' })).toBeNull();
    });

    it('deletes a session with its runtime row and the secrets that row references, and nothing else', async () => {
      const { store } = await openFresh();
      await store.insertSession(session());
      await store.insertSession(session('s-2'));
      const secretId = await store.putSecret('agentctl-auth-i-1', 'tok');
      await store.putSecret('other', 'keep');
      await store.upsertRuntime({ ...runtime, secretRefs: { AGENTCTL_AUTH_TOKEN: secretId } });
      await store.deleteSession('s-1');
      expect(await store.getSession('s-1')).toBeNull();
      expect(await store.getRuntime('s-1')).toBeNull();
      expect(await store.listSecretIds()).toEqual(['other']);
      expect((await store.listSessions()).map((s) => s.id)).toEqual(['s-2']);
      await expect(store.deleteSession('s-1'), 'deleting again is fine').resolves.toBeUndefined();
    });

    it('keeps one runtime row per session and refuses a write from another instance unless it replaces it', async () => {
      const fixed = new Date('2026-03-03T00:00:00.000Z');
      const { store } = await openFresh({ now: () => fixed });
      await store.insertSession(session());
      const first = await store.upsertRuntime(runtime);
      const second = await store.upsertRuntime({ ...runtime, state: 'agentctl_started', metadata: { local_agentctl_pid: '6' } });
      expect(second.updatedAt > first.updatedAt).toBe(true);
      expect(second.createdAt).toBe(first.createdAt);
      expect(await store.getRuntime('s-1')).toEqual(second);
      expect(await store.listRuntime()).toEqual([second]);
      await expect(store.upsertRuntime({ ...runtime, instanceId: 'i-2' })).rejects.toThrow(InventoryConflictError);
      const replaced = await store.upsertRuntime({ ...runtime, instanceId: 'i-2' }, { replaceInstance: 'i-1' });
      expect(replaced.instanceId).toBe('i-2');
      expect(replaced.updatedAt > second.updatedAt).toBe(true);
      expect(await store.listRuntime()).toEqual([replaced]);
    });

    it('lets exactly one of two instances racing for a session write its runtime row', async () => {
      const { store } = await openFresh();
      await store.insertSession(session());
      const results = await Promise.allSettled([store.upsertRuntime(runtime), store.upsertRuntime({ ...runtime, instanceId: 'i-2' })]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const rejected = results.find((r) => r.status === 'rejected');
      expect(rejected?.reason).toBeInstanceOf(InventoryConflictError);
    });

    it('releases a runtime row only on an exact (session, instance, updated_at) match', async () => {
      const { store } = await openFresh();
      await store.insertSession(session());
      const row = await store.upsertRuntime(runtime);
      const newer = await store.upsertRuntime({ ...runtime, state: 'agentctl_started' });
      await expect(store.releaseRuntime('s-1', 'i-1', row.updatedAt)).rejects.toThrow(/updated since/);
      await expect(store.releaseRuntime('s-1', 'i-other', newer.updatedAt)).rejects.toThrow(/rotated to instance 'i-1'/);
      await store.releaseRuntime('s-1', 'i-1', newer.updatedAt);
      expect(await store.getRuntime('s-1')).toBeNull();
      await expect(store.releaseRuntime('s-1', 'i-1', newer.updatedAt), 'a released row is released').resolves.toBeUndefined();
    });

    it('refuses runtime metadata it may not persist, naming the key, and stores nothing of it', async () => {
      const { db, store } = await openFresh();
      await store.insertSession(session());
      await store.upsertRuntime({ ...runtime, metadata: { local_agentctl_pid: '6', env_secret_id_TOKEN: 'sec-1' } });
      const bad = store.upsertRuntime({ ...runtime, metadata: { local_agentctl_pid: '7', AGENTCTL_AUTH_TOKEN: 'raw-token-in-metadata' } });
      await expect(bad).rejects.toThrow(InventoryMetadataError);
      await expect(bad).rejects.toThrow(/AGENTCTL_AUTH_TOKEN/);
      await expect(store.upsertRuntime({ ...runtime, metadata: { kube_pod: 'p' } })).rejects.toThrow(/not a known metadata key/);
      expect((await store.getRuntime('s-1'))?.metadata, 'the row keeps its last good version').toEqual({ local_agentctl_pid: '6', env_secret_id_TOKEN: 'sec-1' });
      expect(await db.dump()).not.toContain('raw-token-in-metadata');
    });

    it('stores secrets encrypted: reveal, replace, list in id order, delete; the plaintext is nowhere in the database', async () => {
      const { db, store } = await openFresh();
      expect(await store.putSecret('b-secret', 'plain-token-value-123')).toBe('b-secret');
      await store.putSecret('a-secret', 'first-plain-value');
      await store.putSecret('a-secret', 'second-plain-value');
      expect(await store.revealSecret('b-secret')).toBe('plain-token-value-123');
      expect(await store.revealSecret('a-secret')).toBe('second-plain-value');
      expect(await store.listSecretIds()).toEqual(['a-secret', 'b-secret']);
      const dump = await db.dump();
      for (const plain of ['plain-token-value-123', 'first-plain-value', 'second-plain-value']) expect(dump).not.toContain(plain);
      await store.deleteSecret('a-secret');
      await expect(store.revealSecret('a-secret')).rejects.toThrow(SecretStoreError);
      await expect(store.putSecret('../bad id', 'x')).rejects.toThrow(/invalid secret id/);
      expect(await store.listSecretIds()).toEqual(['b-secret']);
    });

    it('takes an equal generation from another holder, and checks nothing before a claim', async () => {
      const { db, store: a } = await openFresh();
      const b = await another(db);
      const unfenced = await another(db);
      expect(await a.claimFence({ holder: 'pod-a', generation: 5 })).toBe(true);
      expect(await b.claimFence({ holder: 'pod-b', generation: 5 })).toBe(true);
      await expect(a.putSecret('x', 'y')).rejects.toThrow(/superseded by holder 'pod-b' \(generation 5\)/);
      await b.putSecret('x', 'y');
      await unfenced.putSecret('z', 'single-controller mode');
      expect(await unfenced.listSecretIds()).toEqual(['x', 'z']);
    });

    it('shares its data with a second store on the same database', async () => {
      const { db, store } = await openFresh();
      const other = await another(db);
      await store.insertSession(session());
      await store.putSecret('shared', 'v');
      expect((await other.getSession('s-1'))?.id).toBe('s-1');
      expect(await other.revealSecret('shared')).toBe('v');
    });

    it('fences: once a newer generation is claimed, the deposed store’s writes are refused and its claims fail', async () => {
      const { db, store: old } = await openFresh();
      const next = await another(db);
      await old.insertSession(session());
      expect(await old.claimFence({ holder: 'pod-a', generation: 1 })).toBe(true);
      await old.updateSession('s-1', { state: 'ready' });
      expect(await next.claimFence({ holder: 'pod-b', generation: 2 })).toBe(true);
      const refused = old.updateSession('s-1', { state: 'failed' });
      await expect(refused).rejects.toThrow(InventoryFencedError);
      await expect(refused).rejects.toThrow(/superseded by holder 'pod-b' \(generation 2\).*no longer the leader/);
      for (const write of [
        () => old.insertSession(session('s-2')),
        () => old.upsertRuntime(runtime),
        () => old.putSecret('x', 'y'),
        () => old.deleteSecret('x'),
        () => old.deleteSession('s-1'),
      ]) {
        await expect(write()).rejects.toThrow(InventoryFencedError);
      }
      expect(await old.claimFence({ holder: 'pod-a', generation: 1 }), 'an older generation cannot claim back').toBe(false);
      const late = await another(db);
      expect(await late.claimFence({ holder: 'pod-c', generation: 1 }), 'nor can a store that comes late').toBe(false);
      await expect(late.putSecret('x', 'y'), 'a refused claim refuses its writes').rejects.toThrow(InventoryFencedError);
      expect((await old.getSession('s-1'))?.state, 'reads still work, and the refused write left nothing').toBe('ready');
      expect(await old.listSessions()).toHaveLength(1);
      await next.updateSession('s-1', { state: 'stopped' });
      expect(await old.claimFence({ holder: 'pod-a', generation: 3 }), 'a newer generation claims').toBe(true);
      await expect(next.putSecret('x', 'y')).rejects.toThrow(/superseded by holder 'pod-a' \(generation 3\)/);
      await old.putSecret('x', 'y');
    });

    it('gives every store on one inventory the same installation id, created once', async () => {
      const db = await fresh();
      const [a, b] = await Promise.all([db.open(), db.open()]);
      opened.push(a, b);
      const ids = await Promise.all([a.installationId(), b.installationId(), a.installationId()]);
      expect(ids[0]).toMatch(/^[0-9a-f]{32}$/);
      expect(new Set(ids).size, 'one id, whoever asked first').toBe(1);
    });

    it('migrates once when two controllers open a new database at the same time', async () => {
      const db = await fresh();
      const both = await Promise.all([db.open(), db.open()]);
      opened.push(...both);
      expect(await Promise.all(both.map((s) => s.schemaVersion()))).toEqual([6, 6]);
      expect(await db.count('schema_migrations')).toBe(6);
    });

    it('keeps acknowledged writes across a restart of the backend, and takes the next write after it', async () => {
      const { db, store } = await openFresh();
      await store.insertSession(session());
      const row = await store.upsertRuntime({ ...runtime, state: 'agentctl_started' });
      await store.putSecret('agentctl-auth-i-1', 'tok');
      const after = await db.restart(store);
      if (after !== store) opened.push(after);
      expect(await after.getRuntime('s-1')).toEqual(row);
      expect(await after.revealSecret('agentctl-auth-i-1')).toBe('tok');
      const next = await after.upsertRuntime({ ...runtime, state: 'ready' });
      expect(next.updatedAt > row.updatedAt).toBe(true);
      expect((await after.getRuntime('s-1'))?.state).toBe('ready');
    });

    poolMemberContract({ openFresh, another });
    recordedOutputContract({ openFresh, another, session });
    egressContract({ openFresh, another, session });
  });
}
