/**
 * Lookups by a name that came from outside (a request, a config file): only a map's own entries
 * count, never what every object inherits (`constructor`, `toString`, `__proto__`).
 * @module
 */

/** The own entry `key` of `record`, or undefined (also for `constructor`, `__proto__` …). */
export function ownValue<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

/** An empty map with no prototype: nothing is found in it that was not put there. */
export function emptyMap<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}

/**
 * The path (`agents.__proto__`) of the first `__proto__` key in `value`'s plain objects and arrays,
 * or null. Such a key never reaches a map as an entry: assigning it replaces the object's prototype
 * instead, so a config or request naming it is refused rather than silently changed.
 */
export function protoKeyPath(value: unknown, path: readonly (string | number)[] = []): (string | number)[] | null {
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) {
      const found = protoKeyPath(item, [...path, i]);
      if (found) return found;
    }
    return null;
  }
  if (value === null || typeof value !== 'object') return null;
  for (const key of Object.keys(value)) {
    if (key === '__proto__') return [...path, key];
    const found = protoKeyPath((value as Record<string, unknown>)[key], [...path, key]);
    if (found) return found;
  }
  return null;
}
