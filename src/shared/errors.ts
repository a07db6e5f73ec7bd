/**
 * Small error helpers shared by the controller side (inventory, executors, controller).
 * @module
 */

/** The message of anything thrown, without assuming it is an Error. */
export function errorMessage(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) {
    return [err.message, ...err.errors.map((e) => errorMessage(e))].join('; ');
  }
  if (err instanceof Error) return err.message;
  return String(err);
}

/** The `code` of a Node system error (`ENOENT`, `EACCES` …), if any. */
export function errnoCode(err: unknown): string | undefined {
  if (err instanceof Error && 'code' in err && typeof (err as { code: unknown }).code === 'string') {
    return (err as { code: string }).code;
  }
  return undefined;
}

/**
 * Joins a primary error with errors of its cleanup: the primary error stays the one callers see
 * (its class and message), the cleanup errors ride along in `rollbackErrors` and `cause`.
 */
export function withRollbackErrors<E extends Error>(primary: E, rollbackErrors: unknown[]): E {
  if (rollbackErrors.length === 0) return primary;
  const agg = new AggregateError(rollbackErrors, `rollback failed: ${rollbackErrors.map((e) => errorMessage(e)).join('; ')}`);
  Object.defineProperty(primary, 'rollbackErrors', { value: rollbackErrors, enumerable: false });
  if (primary.cause === undefined) {
    Object.defineProperty(primary, 'cause', { value: agg, enumerable: false, configurable: true, writable: true });
  }
  primary.message = `${primary.message} (and ${agg.message})`;
  return primary;
}
