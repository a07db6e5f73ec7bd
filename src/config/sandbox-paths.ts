/**
 * `executors.<name>.sandbox_hide` / `sandbox_expose` of a local executor: `~/…` expanded against the
 * controller's home, every entry absolute and normalized, errors naming the entry.
 * @module
 */
import { homedir } from 'node:os';
import { isAbsolute, join, normalize } from 'node:path';
import { ConfigFieldError } from '../shared/config-field-error.js';

interface SandboxPaths {
  /** Absolute paths hidden from the executor's agents besides the defaults. */
  sandboxHide: readonly string[];
  /** Absolute paths its agents may read (read-only). */
  sandboxExpose: readonly string[];
}

function resolveList(field: string, raw: readonly string[] | undefined, home: string, source: string | null): string[] {
  return (raw ?? []).map((entry, i) => {
    const path = entry.trim();
    const expanded = path === '~' ? home : path.startsWith('~/') ? join(home, path.slice(2)) : path;
    if (!isAbsolute(expanded)) throw new ConfigFieldError(`${field}[${i}]`, 'must be an absolute path or start with ~/', source);
    const out = normalize(expanded).replace(/(.)\/+$/, '$1');
    if (out === '/') throw new ConfigFieldError(`${field}[${i}]`, 'must not be / (name the files or directories themselves)', source);
    return out;
  });
}

/** The resolved lists of `executors.<name>`; throws ConfigFieldError naming the bad entry. */
export function resolveSandboxPaths(
  name: string,
  e: { sandbox_hide?: readonly string[] | undefined; sandbox_expose?: readonly string[] | undefined },
  ctx: { source: string | null; homeDir?: string },
): SandboxPaths {
  const home = ctx.homeDir ?? homedir();
  const sandboxHide = resolveList(`executors.${name}.sandbox_hide`, e.sandbox_hide, home, ctx.source);
  const sandboxExpose = resolveList(`executors.${name}.sandbox_expose`, e.sandbox_expose, home, ctx.source);
  const both = sandboxExpose.findIndex((p) => sandboxHide.includes(p));
  if (both >= 0) throw new ConfigFieldError(`executors.${name}.sandbox_expose[${both}]`, 'is also listed in sandbox_hide (choose one)', ctx.source);
  return { sandboxHide: [...new Set(sandboxHide)], sandboxExpose: [...new Set(sandboxExpose)] };
}
