/**
 * The durable inventory: sessions, runtime rows (one per running instance) and encrypted secrets.
 * @module
 */
export { InventoryStore, DATABASE_FILE, type InventoryStoreOptions, type RuntimeUpsert } from './store.js';
export {
  persistentMetadata,
  isProvisionalState,
  FINAL_RUNTIME_STATES,
  SECRET_ID_KEY_PREFIX,
  type PersistedProfileSnapshot,
  type PersistedStage,
  type PersistedRepository,
  type RuntimeMetadata,
  type RuntimeRecord,
  type SessionRecord,
  type SessionRequestData,
} from './records.js';
export { SECRET_KEY_FILE } from './secrets.js';
export { InventoryConflictError, InventoryCorruptError, InventoryMetadataError, InventoryOpenError, SecretStoreError } from './errors.js';
