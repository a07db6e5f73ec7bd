/**
 * The durable inventory: sessions, runtime rows (one per running instance), warm pool members,
 * encrypted secrets, mirrored agent output and egress proxy credentials and records, behind one async interface (`Inventory`) with two backends: SQLite in the data
 * dir (the default) and Postgres shared by a controller's replicas. `openInventory` opens the one
 * berth.yaml names.
 * @module
 */
export type { EgressRecordInput, EgressRecordRow, EgressSummary, Inventory, InventoryFence } from './inventory.js';
export { openInventory, postgresSettings } from './open.js';
export { InventoryStore } from './store.js';
export { timeInventory } from './timed.js';
export {
  isProvisionalState,
  SECRET_ID_KEY_PREFIX,
  type RuntimeRecord,
  type SessionRecord,
  type SessionRequestData,
} from './records.js';
export type { PoolMemberRecord } from './pool-records.js';
export { DEFAULT_RECORDED_OUTPUT_BYTES, type RecordedOutputInput } from './output-records.js';
export { InventoryOpenError } from './errors.js';
