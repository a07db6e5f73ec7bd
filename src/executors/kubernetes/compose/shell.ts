/**
 * POSIX shell quoting for the scripts Berth runs in a Pod. Every data value (path, URL, branch,
 * env value) goes into a script through {@link shQuote}, never by plain interpolation.
 * @module
 */

/** `'…'` with each `'` written as `'\''`; safe for any string without NUL (which no shell can hold). */
export function shQuote(value: string): string {
  if (value.includes('\0')) throw new Error('shell values cannot contain NUL bytes');
  return `'${value.replace(/'/g, `'\\''`)}'`;
}
