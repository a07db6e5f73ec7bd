/**
 * Where `berth` sends its API calls: a remote controller (`--server URL`, `$BERTH_SERVER`, or the
 * current context of `~/.config/berth/config.yaml`) or the `berth serve` of a local data dir.
 * The config file holds named contexts (server URL, bearer token, optional CA bundle path); it is
 * written with mode 0600 because of the tokens. Pure parsing and precedence here (no network):
 *
 *  1. `--server URL`  (with `--data-dir` too: a usage error)
 *  2. `--data-dir DIR`  local
 *  3. `$BERTH_SERVER`
 *  4. `$BERTH_DATA_DIR`  local
 *  5. the current context
 *  6. the default data dir  local
 *
 * A server given by flag or environment takes the token and CA of the context with the same URL.
 * @module
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import type * as Yaml from 'yaml';
import { z } from 'zod';
import { UsageError } from './exit-codes.js';

/** `yaml`, loaded only when there is a config file (most local commands have none: a faster start). */
let yamlModule: typeof Yaml | undefined;
const loadYaml = (): typeof Yaml => (yamlModule ??= createRequire(import.meta.url)('yaml') as typeof Yaml);

/** A context's name: as a session name (1-63 letters, digits, ".", "_", "-"); `local` is reserved. */
const CONTEXT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/;
/** The name `berth context use` takes for the local data dir. */
export const LOCAL_CONTEXT = 'local';

/** A server URL as stored and compared: http(s), no path but `/`, no query, no credentials; without the trailing slash. */
export function normalizeServerUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UsageError(`server ${JSON.stringify(raw)} is not a URL (e.g. https://berth.example.com)`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UsageError(`server ${raw}: must be an https:// URL`);
  if (url.username !== '' || url.password !== '') throw new UsageError(`server ${url.host}: must not carry credentials (berth login reads the token)`);
  if (url.search !== '' || url.hash !== '') throw new UsageError(`server ${raw}: must not have a query or fragment`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const loopback = host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
  // The bearer token would cross the network in clear text.
  if (url.protocol === 'http:' && !loopback) throw new UsageError(`server ${raw}: plain http is allowed on loopback only (a port-forward); use https://`);
  return `${url.protocol}//${url.host}${url.pathname.replace(/\/+$/, '')}`;
}

const ContextSchema = z.strictObject({
  server: z.string().refine((s) => {
    try {
      normalizeServerUrl(s);
      return true;
    } catch {
      return false;
    }
  }, 'must be an https:// URL (http:// on loopback only)'),
  token: z.string().min(1, 'must not be empty'),
  ca: z.string().min(1, 'must be a path to a PEM file').optional(),
});

const ConfigSchema = z.strictObject({
  current: z.string().optional(),
  contexts: z.record(z.string().regex(CONTEXT_NAME, 'context names are 1-63 letters, digits, ".", "_", "-"'), ContextSchema).default({}),
});
export type RemoteConfig = z.infer<typeof ConfigSchema>;

/** Thrown for a config.yaml that does not parse; the message names the file and the field. */
class RemoteConfigError extends Error {
  override readonly name = 'RemoteConfigError';
}

/** `$XDG_CONFIG_HOME/berth/config.yaml`, else `~/.config/berth/config.yaml`. */
export function remoteConfigPath(env: Readonly<Record<string, string | undefined>>): string {
  const base = env.XDG_CONFIG_HOME?.startsWith('/') ? env.XDG_CONFIG_HOME : join(env.HOME || homedir(), '.config');
  return join(base, 'berth', 'config.yaml');
}

/** Parses the text of config.yaml (`file` names it in errors). */
export function parseRemoteConfig(text: string, file: string): RemoteConfig {
  let raw: unknown;
  try {
    raw = loadYaml().parse(text) as unknown;
  } catch (err) {
    throw new RemoteConfigError(`${file}: not valid YAML: ${(err as Error).message.split('\n')[0] ?? ''}`);
  }
  const parsed = ConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const keys = issue?.code === 'unrecognized_keys' ? issue.keys : [];
    const path = [...(issue?.path ?? []), ...keys.slice(0, 1)].map(String).join('.');
    const what = keys.length > 0 ? 'unknown field' : (issue?.message ?? 'invalid');
    throw new RemoteConfigError(`${file}: ${path || '(top level)'}: ${what}`);
  }
  const cfg = parsed.data;
  if (cfg.current !== undefined && !(cfg.current in cfg.contexts)) throw new RemoteConfigError(`${file}: current: no context named ${JSON.stringify(cfg.current)}`);
  return cfg;
}

/** The config file's contents; an empty config when there is no file. */
export function loadRemoteConfig(file: string): RemoteConfig {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { contexts: {} };
    throw new RemoteConfigError(`${file}: ${(err as Error).message}`);
  }
  return parseRemoteConfig(text, file);
}

/** Writes the config atomically, mode 0600 (it holds tokens), in a 0700 directory. */
export function saveRemoteConfig(file: string, cfg: RemoteConfig): void {
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, loadYaml().stringify(cfg), { mode: 0o600 });
  renameSync(tmp, file);
}

/** Throws UsageError unless `name` may name a context. */
export function checkContextName(name: string): void {
  if (name === LOCAL_CONTEXT) throw new UsageError(`context name '${LOCAL_CONTEXT}' is reserved for the local data dir`);
  if (!CONTEXT_NAME.test(name)) throw new UsageError(`context name ${JSON.stringify(name)}: 1-63 letters, digits, ".", "_", "-"`);
}

/** A context name for `url` when login gets no --name: its host and port (`berth.example.com`, `127.0.0.1-8443`). */
export function defaultContextName(url: string): string {
  const u = new URL(url);
  const name = u.host.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^[^A-Za-z0-9]+/, '').slice(0, 63);
  return name === '' || name === LOCAL_CONTEXT ? 'remote' : name;
}

/** Where the CLI's API calls go. */
type Target =
  | { kind: 'local'; dataDir?: string }
  | { kind: 'remote'; server: string; token: string | null; ca?: string; context: string | null; source: 'flag' | 'env' | 'context' };

/**
 * The precedence of the module doc. `config` is loaded only when needed (a broken config.yaml
 * does not stop a local command that names its data dir).
 */
export function resolveTarget(
  flags: { server?: string | undefined; dataDir?: string | undefined },
  env: Readonly<Record<string, string | undefined>>,
  config: () => RemoteConfig,
): Target {
  if (flags.server !== undefined && flags.dataDir !== undefined) throw new UsageError('give --server or --data-dir, not both (--data-dir means the local controller)');
  if (flags.server !== undefined) return byUrl(flags.server, 'flag', config());
  if (flags.dataDir !== undefined) return { kind: 'local', dataDir: flags.dataDir };
  if (env.BERTH_SERVER) return byUrl(env.BERTH_SERVER, 'env', config());
  if (env.BERTH_DATA_DIR) return { kind: 'local' };
  const cfg = config();
  const name = cfg.current;
  const ctx = name === undefined ? undefined : cfg.contexts[name];
  if (name === undefined || ctx === undefined) return { kind: 'local' };
  return { kind: 'remote', server: normalizeServerUrl(ctx.server), token: ctx.token, ...(ctx.ca !== undefined ? { ca: ctx.ca } : {}), context: name, source: 'context' };
}

/** A server named by flag or environment, with the credentials of the context for the same URL (the current one first). */
function byUrl(raw: string, source: 'flag' | 'env', cfg: RemoteConfig): Target {
  const server = normalizeServerUrl(raw);
  const names = Object.keys(cfg.contexts).sort((a, b) => Number(b === cfg.current) - Number(a === cfg.current));
  const name = names.find((n) => normalizeServerUrl(cfg.contexts[n]!.server) === server);
  const ctx = name === undefined ? undefined : cfg.contexts[name];
  if (name === undefined || ctx === undefined) return { kind: 'remote', server, token: null, context: null, source };
  return { kind: 'remote', server, token: ctx.token, ...(ctx.ca !== undefined ? { ca: ctx.ca } : {}), context: name, source };
}
