/**
 * The durable inventory: sessions, runtime rows (one per running instance) and encrypted secrets.
 * @module
 */
export { InventoryStore } from './store.js';
export {
  isProvisionalState,
  SECRET_ID_KEY_PREFIX,
  type RuntimeRecord,
  type SessionRecord,
  type SessionRequestData,
} from './records.js';
export { InventoryOpenError } from './errors.js';
