/**
 * Structural comparison of Kubernetes sub-objects that tolerates the API server's serialization
 * noise: an unset field, `null`, `''` and `false` all mean "not set" for the objects compared here
 * (volumes, mounts, ports, selectors), and key order does not matter.
 * @module
 */

function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value instanceof Date) return value.toISOString();
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key];
      if (v === undefined || v === null || v === '' || v === false) continue;
      out[key] = canonical(v);
    }
    return out;
  }
  return value;
}

/** Whether `a` and `b` are the same object up to unset-vs-default noise and key order. */
export function sameObject(a: unknown, b: unknown): boolean {
  const ca = a === undefined || a === null ? undefined : canonical(a);
  const cb = b === undefined || b === null ? undefined : canonical(b);
  return JSON.stringify(ca) === JSON.stringify(cb);
}
