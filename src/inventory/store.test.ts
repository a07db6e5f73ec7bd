import Database from 'better-sqlite3';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InventoryConflictError, InventoryOpenError } from './errors.js';
import { InventoryStore } from './store.js';

const dirs: string[] = [];
const stores: InventoryStore[] = [];
function open(dataDir?: string): { store: InventoryStore; dir: string } {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'berth-store-'));
  dirs.push(dir);
  const store = InventoryStore.open({ dataDir: dir, metadataKeyPrefixes: ['local_'] });
  stores.push(store);
  return { store, dir };
}
afterEach(() => {
  for (const s of stores.splice(0)) s.close();
  for (const d of dirs.splice(0)) {
    try {
      chmodSync(d, 0o700);
    } catch {
      /* already gone */
    }
    rmSync(d, { recursive: true, force: true });
  }
});

function addSession(store: InventoryStore, id = 's-1'): void {
  store.insertSession({
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
  });
}

const runtime = { sessionId: 's-1', instanceId: 'i-1', executor: 'local', state: 'workspace_created', metadata: {}, stages: [], secretRefs: {} };

describe('InventoryStore', () => {
  it('applies migrations once and uses WAL with synchronous=FULL', () => {
    const { store, dir } = open();
    expect(store.schemaVersion()).toBe(1);
    store.close();
    const again = InventoryStore.open({ dataDir: dir });
    stores.push(again);
    expect(again.schemaVersion()).toBe(1);
    const db = new Database(join(dir, 'state', 'berth.db'));
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect((db.prepare('SELECT COUNT(*) AS n FROM schema_migrations').get() as { n: number }).n).toBe(1);
    db.close();
  });

  it('refuses a database written by a newer schema', () => {
    const { store, dir } = open();
    store.close();
    const db = new Database(join(dir, 'state', 'berth.db'));
    db.prepare("INSERT INTO schema_migrations VALUES (99, 'future', 'x')").run();
    db.close();
    expect(() => InventoryStore.open({ dataDir: dir })).toThrow(/schema version 99 is newer/);
  });

  it('fails with a clear error on a data dir it cannot write', () => {
    const base = mkdtempSync(join(tmpdir(), 'berth-ro-'));
    dirs.push(base);
    if (process.getuid?.() === 0) {
      // root ignores permission bits: a path below a regular file is unwritable for everyone
      writeFileSync(join(base, 'file'), 'x');
      expect(() => InventoryStore.open({ dataDir: join(base, 'file', 'data') })).toThrow(InventoryOpenError);
      return;
    }
    chmodSync(base, 0o500);
    expect(() => InventoryStore.open({ dataDir: base })).toThrow(/the data dir is not writable/);
  });

  it('updates and deletes sessions, cascading to the runtime row and its secrets', () => {
    const { store } = open();
    addSession(store);
    const secretId = store.putSecret('agentctl-auth-i-1', 'tok');
    store.upsertRuntime({ ...runtime, secretRefs: { AGENTCTL_AUTH_TOKEN: secretId } });
    expect(store.updateSession('s-1', { state: 'ready' })?.state).toBe('ready');
    expect(store.updateSession('nope', { state: 'ready' })).toBeNull();
    store.deleteSession('s-1');
    expect(store.getSession('s-1')).toBeNull();
    expect(store.getRuntime('s-1')).toBeNull();
    expect(store.listSecretIds()).toEqual([]);
  });

  it('keeps one runtime row per session and refuses a write from another instance', () => {
    const { store } = open();
    addSession(store);
    const first = store.upsertRuntime(runtime);
    const second = store.upsertRuntime({ ...runtime, state: 'agentctl_started' });
    expect(second.updatedAt > first.updatedAt).toBe(true);
    expect(store.listRuntime()).toHaveLength(1);
    expect(() => store.upsertRuntime({ ...runtime, instanceId: 'i-2' })).toThrow(InventoryConflictError);
    expect(store.upsertRuntime({ ...runtime, instanceId: 'i-2' }, { replaceInstance: 'i-1' }).instanceId).toBe('i-2');
  });

  it('releases a runtime row only on an exact (session, instance, updated_at) match', () => {
    const { store } = open();
    addSession(store);
    const row = store.upsertRuntime(runtime);
    const newer = store.upsertRuntime({ ...runtime, state: 'agentctl_started' });
    expect(() => store.releaseRuntime('s-1', 'i-1', row.updatedAt)).toThrow(/updated since/);
    expect(() => store.releaseRuntime('s-1', 'i-other', newer.updatedAt)).toThrow(/rotated to instance 'i-1'/);
    store.releaseRuntime('s-1', 'i-1', newer.updatedAt);
    expect(store.getRuntime('s-1')).toBeNull();
    expect(() => store.releaseRuntime('s-1', 'i-1', newer.updatedAt), 'a released row is released').not.toThrow();
  });

  it('stores secrets encrypted: the plaintext is not in the database file', () => {
    const { store, dir } = open();
    const id = store.putSecret('agentctl-auth-i-1', 'plain-token-value-123');
    expect(store.revealSecret(id)).toBe('plain-token-value-123');
    store.close();
    for (const f of ['berth.db', 'berth.db-wal']) {
      let content = '';
      try {
        content = readFileSync(join(dir, 'state', f)).toString('latin1');
      } catch {
        continue;
      }
      expect(content).not.toContain('plain-token-value-123');
    }
  });

  it('refuses a raw secret passed in runtime metadata and stores nothing of it', () => {
    const { store, dir } = open();
    addSession(store);
    store.upsertRuntime({ ...runtime, metadata: { local_agentctl_pid: '6' } });
    expect(() => store.upsertRuntime({ ...runtime, metadata: { local_agentctl_pid: '7', AGENTCTL_AUTH_TOKEN: 'raw-token-in-metadata' } })).toThrow(/AGENTCTL_AUTH_TOKEN/);
    expect(store.getRuntime('s-1')?.metadata, 'the row keeps its last good version').toEqual({ local_agentctl_pid: '6' });
    const db = new Database(join(dir, 'state', 'berth.db'));
    const raw = db.prepare('SELECT metadata FROM runtime_inventory').get() as { metadata: string };
    db.close();
    expect(raw.metadata).not.toContain('raw-token-in-metadata');
  });
});

