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

/**
 * Thrown by insertSession (insertPoolMember) when the id is taken by a different session (pool
 * member); an identical one is returned instead. `sessionId`: the id taken, whichever kind. Thrown
 * by putEgressCredential when another session holds the token digest (`sessionId`: the writer; the
 * digest is not shown).
 */
export class InventoryDuplicateError extends Error {
  override readonly name = 'InventoryDuplicateError';
  constructor(
    readonly sessionId: string,
    what: 'session' | 'pool member' | 'egress token digest' = 'session',
  ) {
    super(
      what === 'egress token digest'
        ? `inventory: the egress token digest written for session '${sessionId}' is another session's`
        : `inventory: ${what} '${sessionId}' already exists with other content`,
    );
  }
}

/**
 * Thrown by a write of a store whose fence claim was superseded: another controller claimed a newer
 * generation, so this one is no longer the leader and must stop acting on sessions.
 */
export class InventoryFencedError extends Error {
  override readonly name = 'InventoryFencedError';
  constructor(
    readonly claim: { holder: string; generation: number },
    readonly current: { holder: string; generation: number } | null,
  ) {
    const by = current === null ? 'the fence row is gone' : `superseded by holder '${current.holder}' (generation ${current.generation})`;
    super(
      `inventory: write refused: this controller's claim (holder '${claim.holder}', generation ${claim.generation}) was ${by}; ` +
        'this controller is no longer the leader: stop writing and step down (it rejoins as a follower when restarted)',
    );
  }
}

/** Thrown when the database stays unreachable past the retry budget; never carries the connection string. */
export class InventoryUnavailableError extends Error {
  override readonly name = 'InventoryUnavailableError';
  constructor(detail: string) {
    super(`inventory: database unavailable: ${detail}`);
  }
}
