/**
 * An inventory that reports how long each call took (the controller feeds a Prometheus histogram:
 * store latency per checkpoint).
 * @module
 */
import type { Inventory } from './inventory.js';

/** Called after every call: the method's name, its duration in seconds, and whether it succeeded. */
type InventoryObserver = (op: string, seconds: number, ok: boolean) => void;

/** `inner`, with `observe` called around every method. An observer that throws is ignored. */
export function timeInventory(inner: Inventory, observe: InventoryObserver): Inventory {
  async function timed<T>(op: string, call: () => Promise<T>): Promise<T> {
    const start = performance.now();
    let ok = false;
    try {
      const result = await call();
      ok = true;
      return result;
    } finally {
      try {
        observe(op, (performance.now() - start) / 1000, ok);
      } catch {
        /* metrics never break a write */
      }
    }
  }
  return {
    backend: inner.backend,
    close: () => timed('close', () => inner.close()),
    schemaVersion: () => timed('schemaVersion', () => inner.schemaVersion()),
    insertSession: (record) => timed('insertSession', () => inner.insertSession(record)),
    getSession: (id) => timed('getSession', () => inner.getSession(id)),
    listSessions: () => timed('listSessions', () => inner.listSessions()),
    updateSession: (id, patch) => timed('updateSession', () => inner.updateSession(id, patch)),
    deleteSession: (id) => timed('deleteSession', () => inner.deleteSession(id)),
    getRuntime: (sessionId) => timed('getRuntime', () => inner.getRuntime(sessionId)),
    listRuntime: () => timed('listRuntime', () => inner.listRuntime()),
    upsertRuntime: (record, opts) => timed('upsertRuntime', () => inner.upsertRuntime(record, opts)),
    releaseRuntime: (sessionId, instanceId, updatedAt) => timed('releaseRuntime', () => inner.releaseRuntime(sessionId, instanceId, updatedAt)),
    insertPoolMember: (record) => timed('insertPoolMember', () => inner.insertPoolMember(record)),
    getPoolMember: (id) => timed('getPoolMember', () => inner.getPoolMember(id)),
    listPoolMembers: (filter) => timed('listPoolMembers', () => inner.listPoolMembers(filter)),
    updatePoolMember: (id, patch, expect) => timed('updatePoolMember', () => inner.updatePoolMember(id, patch, expect)),
    claimPoolMember: (claim) => timed('claimPoolMember', () => inner.claimPoolMember(claim)),
    deletePoolMember: (id) => timed('deletePoolMember', () => inner.deletePoolMember(id)),
    putRecordedOutput: (sessionId, processId, chunks, opts) => timed('putRecordedOutput', () => inner.putRecordedOutput(sessionId, processId, chunks, opts)),
    readRecordedOutput: (sessionId, processId, from) => timed('readRecordedOutput', () => inner.readRecordedOutput(sessionId, processId, from)),
    putEgressCredential: (record) => timed('putEgressCredential', () => inner.putEgressCredential(record)),
    findEgressCredential: (tokenDigest) => timed('findEgressCredential', () => inner.findEgressCredential(tokenDigest)),
    deleteEgressCredential: (sessionId) => timed('deleteEgressCredential', () => inner.deleteEgressCredential(sessionId)),
    appendEgressRecords: (records) => timed('appendEgressRecords', () => inner.appendEgressRecords(records)),
    listEgressRecords: (sessionId, opts) => timed('listEgressRecords', () => inner.listEgressRecords(sessionId, opts)),
    egressSummary: (sessionId) => timed('egressSummary', () => inner.egressSummary(sessionId)),
    putSecret: (id, plaintext) => timed('putSecret', () => inner.putSecret(id, plaintext)),
    revealSecret: (id) => timed('revealSecret', () => inner.revealSecret(id)),
    deleteSecret: (id) => timed('deleteSecret', () => inner.deleteSecret(id)),
    listSecretIds: () => timed('listSecretIds', () => inner.listSecretIds()),
    claimFence: (fence) => timed('claimFence', () => inner.claimFence(fence)),
    installationId: () => timed('installationId', () => inner.installationId()),
  };
}
