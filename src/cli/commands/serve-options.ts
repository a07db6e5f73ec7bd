/**
 * The `berth serve` options a Deployment needs, read and checked (no side effects beyond reading
 * the token file): `--token-file` (a mounted Secret instead of a fresh random token) and
 * `--public-host` (the Service and Ingress names the Host check accepts).
 * @module
 */
import { readFileSync, statSync } from 'node:fs';
import { UsageError } from '../exit-codes.js';

/** A shorter token is refused: the generated one is 43 characters (256 bits, base64url). */
const MIN_TOKEN_LENGTH = 32;
/** A token file larger than this is refused unread (a wrong path must not load a huge file). */
const MAX_TOKEN_FILE_BYTES = 4096;
/** What a bearer token may hold: printable ASCII without spaces (it travels in an HTTP header). */
const TOKEN_CHARS = /^[\x21-\x7e]+$/;

/**
 * The API token of `--token-file FILE` (else `$BERTH_API_TOKEN_FILE`), or undefined when neither
 * is given. Surrounding whitespace (a trailing newline) is dropped. The token itself never appears
 * in an error.
 */
export function readTokenFile(flag: string | undefined, env: NodeJS.ProcessEnv): string | undefined {
  const fromEnv = flag === undefined;
  const file = flag ?? env.BERTH_API_TOKEN_FILE;
  if (file === undefined || (fromEnv && file === '')) return undefined;
  const where = `serve: --token-file ${file}${fromEnv ? ' (from $BERTH_API_TOKEN_FILE)' : ''}`;
  let text: string;
  try {
    if (statSync(file).size > MAX_TOKEN_FILE_BYTES) throw new UsageError(`${where}: larger than ${MAX_TOKEN_FILE_BYTES} bytes, not a token file`, 'serve');
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${where}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`, 'serve');
  }
  const token = text.trim();
  if (token.length < MIN_TOKEN_LENGTH) throw new UsageError(`${where}: the token must be at least ${MIN_TOKEN_LENGTH} characters`, 'serve');
  if (!TOKEN_CHARS.test(token)) throw new UsageError(`${where}: the token must be one line of printable ASCII without spaces`, 'serve');
  return token;
}

const DNS_LABEL = /^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;
const IPV6 = /^\[?[0-9a-f:.]*:[0-9a-f:.]*\]?$/;

/** Why `name` is not a host name or IP address the Host check can list, or null. */
function publicHostProblem(name: string): string | null {
  if (name.includes('*')) return 'wildcards are not accepted: list each name';
  if (/:\d+$/.test(name) && !name.includes(']') && name.split(':').length === 2) return 'give the name without a port (every port of it is accepted)';
  if (IPV4.test(name)) return name.split('.').every((p) => Number(p) <= 255) ? null : 'not a valid IPv4 address';
  if (IPV6.test(name)) return null;
  if (name.length > 253) return 'longer than 253 characters';
  return name.split('.').every((label) => DNS_LABEL.test(label)) ? null : 'not a DNS name (labels of letters, digits and "-", separated by ".")';
}

/**
 * The names of `--public-host` (repeatable, each a comma list; else `$BERTH_PUBLIC_HOSTS`),
 * lower-case and without duplicates.
 */
export function parsePublicHosts(flag: readonly string[] | undefined, env: NodeJS.ProcessEnv): string[] {
  const fromEnv = flag === undefined || flag.length === 0;
  const raw = fromEnv ? (env.BERTH_PUBLIC_HOSTS ?? '').split(',') : flag.flatMap((v) => v.split(','));
  const names = new Set<string>();
  for (const item of raw) {
    const name = item.trim().toLowerCase();
    if (name === '') continue;
    const problem = publicHostProblem(name);
    if (problem !== null) {
      throw new UsageError(`serve: --public-host ${JSON.stringify(item.trim().slice(0, 260))}${fromEnv ? ' (from $BERTH_PUBLIC_HOSTS)' : ''}: ${problem}`, 'serve');
    }
    names.add(name);
  }
  return [...names];
}
