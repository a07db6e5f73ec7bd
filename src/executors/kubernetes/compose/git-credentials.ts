/**
 * The https clone credential inside the Pod: a credential file on the memory-backed volume and a
 * helper that hands it to git. The credential never appears in argv, the URL, `.git/config`, the
 * Pod spec or a script; prepare.sh removes the file once the clone has succeeded, so the agent
 * (started after prepare) cannot read it.
 * @module
 */
import type { RepositoryCredentials } from '../../executor.js';
import { ComposeFieldError } from './errors.js';
import type { BootstrapPaths } from './paths.js';
import { shQuote } from './shell.js';

/** The credential in git's credential-helper output format (mode 0600 file content). */
export function gitCredentialFile(credentials: RepositoryCredentials): string {
  for (const key of ['username', 'password'] as const) {
    // A newline would let the value smuggle further attributes (url=, host=) into git's protocol.
    if (/[\n\r\0]/.test(credentials[key])) throw new ComposeFieldError(`repository_credentials.${key}`, 'must not contain line breaks or NUL bytes');
  }
  if (credentials.username === '') throw new ComposeFieldError('repository_credentials.username', 'must not be empty');
  return `username=${credentials.username}\npassword=${credentials.password}\n`;
}

/**
 * The helper script (not secret; mode 0700 on the runtime volume). Answers `get` with the file and
 * ignores `store`/`erase`, so nothing is ever saved elsewhere.
 */
export function gitCredentialHelperScript(paths: BootstrapPaths): string {
  const file = shQuote(paths.gitCredentials);
  return ['#!/bin/sh', '[ "${1:-}" = get ] || exit 0', 'cat >/dev/null', `if [ -f ${file} ]; then cat ${file}; fi`, ''].join('\n');
}

/**
 * `scheme://host[:port]` of an https URL: git matches `credential.<url>.helper` by scheme, host and
 * port, so the helper is only asked for the repository's own server. Throws for a URL with userinfo.
 */
export function credentialScope(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ComposeFieldError('repository.url', 'must be a valid URL');
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw new ComposeFieldError('repository.url', 'credentials are only supported for http(s) URLs');
  if (parsed.username !== '' || parsed.password !== '') throw new ComposeFieldError('repository.url', 'must not carry credentials (they are passed separately)');
  return `${parsed.protocol}//${parsed.host}`;
}
