/**
 * Errors of the durable inventory.
 * @module
 */

/** Thrown when the data dir or the database cannot be opened or written (read-only dir, bad permissions, corrupt file). */
export class InventoryOpenError extends Error {
  override readonly name = 'InventoryOpenError';
  constructor(
    readonly path: string,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`inventory: cannot open ${path}: ${detail}`, options);
  }
}

/** Thrown by a compare-and-swap on a runtime row when the row was rotated or updated in between. */
export class InventoryConflictError extends Error {
  override readonly name = 'InventoryConflictError';
  constructor(
    readonly sessionId: string,
    readonly instanceId: string,
    detail: string,
  ) {
    super(`inventory: runtime row of session '${sessionId}' (instance '${instanceId}'): ${detail}`);
  }
}

/** Thrown when a stored row cannot be decoded (hand-edited or from a newer version). */
export class InventoryCorruptError extends Error {
  override readonly name = 'InventoryCorruptError';
  constructor(
    readonly table: string,
    readonly key: string,
    detail: string,
  ) {
    super(`inventory: ${table} row '${key}' is unreadable: ${detail}`);
  }
}

/** Thrown when runtime metadata holds a key that may not be persisted (unknown, or secret-looking); never carries the value. */
export class InventoryMetadataError extends Error {
  override readonly name = 'InventoryMetadataError';
  constructor(
    readonly key: string,
    detail: string,
  ) {
    super(`inventory: runtime metadata key '${key}' ${detail}`);
  }
}

/** Thrown when a secret cannot be decrypted (tampered ciphertext, another key file) or the key file is unsafe. */
export class SecretStoreError extends Error {
  override readonly name = 'SecretStoreError';
  constructor(
    readonly secretId: string | null,
    detail: string,
    options?: { cause?: unknown },
  ) {
    super(`secret store: ${secretId === null ? '' : `secret '${secretId}': `}${detail}`, options);
  }
}
