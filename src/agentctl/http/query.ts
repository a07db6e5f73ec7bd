/**
 * Query-string parameters with errors that name the parameter.
 * @module
 */
import { protocolError } from '../errors.js';

/** An integer parameter in [min, max], or `fallback` when absent. */
export function intParam(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw protocolError('bad_request', `${name}: must be an integer between ${min} and ${max}`);
  const value = Number(raw);
  if (value < min || value > max) throw protocolError('bad_request', `${name}: must be an integer between ${min} and ${max}`);
  return value;
}

/** A string parameter, or `null` when absent. */
export function stringParam(query: URLSearchParams, name: string): string | null {
  const raw = query.get(name);
  return raw === null || raw === '' ? null : raw;
}

/** A boolean parameter: `true`/`1` or `false`/`0`. */
export function boolParam(query: URLSearchParams, name: string): boolean {
  const raw = query.get(name);
  if (raw === null || raw === '' || raw === 'false' || raw === '0') return false;
  if (raw === 'true' || raw === '1') return true;
  throw protocolError('bad_request', `${name}: must be true or false`);
}

/** A required string parameter. */
export function requiredParam(query: URLSearchParams, name: string): string {
  const value = stringParam(query, name);
  if (value === null) throw protocolError('bad_request', `${name}: query parameter is required`);
  return value;
}
