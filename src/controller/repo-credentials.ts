/**
 * Credentials in repository URLs (`https://user:token@host/x.git`): split off before anything is
 * recorded, so sessions, runtime rows, views and events only ever see the redacted URL, while the
 * credential itself lives in the encrypted secret store (pure; no I/O).
 * @module
 */
import type { RepositoryCredentials } from '../executors/executor.js';
import { LaunchValidationError } from './service.js';

/** Secret id of a session's repository credential (deterministic: rm and the orphan sweep find it). */
const REPO_CREDENTIAL_PREFIX = 'repo-credential-';

export function repoCredentialId(sessionId: string): string {
  return `${REPO_CREDENTIAL_PREFIX}${sessionId}`;
}

/** The session id a repository credential secret belongs to, or null for any other secret id. */
export function sessionOfRepoCredential(secretId: string): string | null {
  return secretId.startsWith(REPO_CREDENTIAL_PREFIX) ? secretId.slice(REPO_CREDENTIAL_PREFIX.length) : null;
}

const SCHEME = /^([a-z][a-z0-9+.-]*):\/\//i;

interface SplitUrl {
  /** The URL without its userinfo (everything else byte for byte as given). */
  url: string;
  /** Present only when the URL carried a credential git would send over HTTP(S). */
  credentials?: RepositoryCredentials;
}

/**
 * Splits the userinfo off an http(s) clone URL. The authority ends at the first `/`, `?` or `#`
 * after `scheme://`, and the userinfo at the last `@` inside it (as WHATWG URL parsing does), so a
 * password holding an unencoded `@` is removed whole. `token@host` (no colon) is a token as the
 * user name with an empty password, the way GitHub and GitLab take them.
 *
 * Other schemes keep a plain user name (`ssh://git@host/x` names the SSH login, not a secret), but
 * a password in them is refused: git would not use it and it must not be stored.
 * Throws LaunchValidationError(`repository.url`).
 */
export function splitRepositoryUrl(raw: string): SplitUrl {
  const out = split(raw);
  if (out.refused) {
    throw new LaunchValidationError('repository.url', 'a password in the URL is only supported for http(s) URLs (use an SSH key or agent for ssh)');
  }
  return out.split;
}

/**
 * The URL as it may be shown or stored: without a credential (http(s) userinfo, or a password in
 * any other scheme). Never throws; used on read, so rows written before credentials were split off
 * are not shown with them either.
 */
export function redactRepositoryUrl(raw: string): string {
  const out = split(raw);
  return out.refused ? out.refused : out.split.url;
}

/** Splits repository.url of a validated reference; `credentials: true` marks that a credential was split off. */
export function splitRepositoryRef<T extends { url?: string }>(ref: T): { repository: T & { credentials?: true }; credentials?: RepositoryCredentials } {
  if (ref.url === undefined) return { repository: ref };
  const { url, credentials } = splitRepositoryUrl(ref.url);
  if (!credentials) return { repository: { ...ref, url } };
  return { repository: { ...ref, url, credentials: true }, credentials };
}

/** `refused`: a non-http(s) URL with a password (the URL without its userinfo, for display). */
function split(raw: string): { split: SplitUrl; refused?: string } {
  const scheme = SCHEME.exec(raw);
  if (!scheme) return { split: { url: raw } };
  const start = scheme[0].length;
  const rest = raw.slice(start);
  const authorityEnd = rest.search(/[/?#]/);
  const authority = authorityEnd === -1 ? rest : rest.slice(0, authorityEnd);
  const at = authority.lastIndexOf('@');
  if (at === -1) return { split: { url: raw } };
  const userinfo = authority.slice(0, at);
  const colon = userinfo.indexOf(':');
  const redacted = `${raw.slice(0, start)}${rest.slice(at + 1)}`;
  const http = /^https?$/i.test(scheme[1] ?? '');
  if (!http) return colon === -1 ? { split: { url: raw } } : { split: { url: raw }, refused: redacted };
  const username = decode(colon === -1 ? userinfo : userinfo.slice(0, colon));
  const password = colon === -1 ? '' : decode(userinfo.slice(colon + 1));
  if (username === '' && password === '') return { split: { url: redacted } };
  return { split: { url: redacted, credentials: { username, password } } };
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    return part; // not valid percent-encoding: git would send it as written
  }
}

/** Serialized form in the secret store. */
export function encodeRepoCredentials(c: RepositoryCredentials): string {
  return JSON.stringify({ username: c.username, password: c.password });
}

/** Throws when the stored value is not what {@link encodeRepoCredentials} wrote (never echoes it). */
export function decodeRepoCredentials(text: string): RepositoryCredentials {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new Error('stored repository credential is malformed');
  }
  const r = raw as { username?: unknown; password?: unknown } | null;
  if (r === null || typeof r !== 'object' || typeof r.username !== 'string' || typeof r.password !== 'string') {
    throw new Error('stored repository credential is malformed');
  }
  return { username: r.username, password: r.password };
}
