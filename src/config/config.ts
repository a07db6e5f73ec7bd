/**
 * Loading `berth.yaml`: raw YAML → schema-checked → resolved config with built-in defaults, so a
 * fresh install needs no config at all (agents `demo` and `demo-acp`: agents.ts; executor `local`).
 * @module
 */
import { resolveIdle, type IdlePolicy } from './idle.js';
import { resolvePool, type PoolPolicy } from './pool.js';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isMap, LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import type { KubernetesConnection, KubernetesProfile } from '../executors/kubernetes/types.js';
import { closestKey } from '../shared/edit-distance.js';
import { errnoCode } from '../shared/errors.js';
import { emptyMap, ownValue, protoKeyPath } from '../shared/own.js';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { BUILTIN_AGENT, PROMPT_PLACEHOLDER, resolveAgents, type AgentProfile } from './agents.js';
import { ConfigFileError } from './errors.js';
import { resolveKubernetesConnection, resolveKubernetesProfile } from './kubernetes.js';
import { resolveSandboxPaths } from './sandbox-paths.js';
import { ConfigFileSchema } from './schema.js';
import { resolveEgressProxyEndpoint, resolveEgressServe, resolveNetwork, type EgressProxyEndpoint, type EgressServeConfig } from './network.js';
import type { NetworkSettings } from '../executors/network.js';
import { resolveStore, type StoreConfig } from './store.js';

const CONFIG_FILE = 'berth.yaml';
const BUILTIN_EXECUTOR = 'local';

export interface LocalExecutorConfig {
  name: string;
  type: 'local';
  /** Absolute path of the agentctl bundle. */
  agentctlPath: string;
  /** `auto` (nothing configured): bubblewrap where it works, else none with a warning at each launch. */
  sandbox: 'auto' | 'bubblewrap' | 'none';
  /** Sandboxed agents share the host network. */
  network: boolean;
  /** Names of serve's environment variables a launch on this executor may pass (`secret_env`). */
  secretEnv: readonly string[];
  /** Absolute paths the sandbox hides besides its defaults (`sandbox_hide`, `~/` expanded). */
  sandboxHide: readonly string[];
  /** Absolute paths sandboxed agents may read (`sandbox_expose`, `~/` expanded). */
  sandboxExpose: readonly string[];
  /** Suspend idle sessions (`idle:`); absent: never. */
  idle?: IdlePolicy;
  description: string;
}

interface KubernetesExecutorConfig {
  name: string;
  type: 'kubernetes';
  /** The validated connection; the flat fields below repeat it for existing readers. */
  connection: KubernetesConnection;
  authMode: 'kubeconfig' | 'in_cluster';
  kubeconfigPath: string | null;
  kubeContext: string | null;
  namespace: string;
  requestTimeoutSeconds: number;
  /** Where its Pods reach the egress proxy (`egress_proxy:`); null: none configured. */
  egressProxy: EgressProxyEndpoint | null;
  /** Names of serve's environment variables a launch on this executor may pass (`secret_env`). */
  secretEnv: readonly string[];
  /** Suspend idle sessions (`idle:`); absent: never. */
  idle?: IdlePolicy;
  description: string;
}

export type ExecutorConfig = LocalExecutorConfig | KubernetesExecutorConfig;

export interface ProfileConfig {
  name: string;
  executor: string;
  env: Record<string, string>;
  /** Names approved for launches of this profile on top of its executor's (`secret_env`). */
  secretEnv: readonly string[];
  description: string;
  /** The validated `kubernetes:` block: set exactly when `executor` is a kubernetes executor. */
  kubernetes: KubernetesProfile | null;
  /** Suspend idle sessions (`idle:`), overriding the executor's; absent: the executor's. */
  idle?: IdlePolicy;
  /** The warm pool (`pool:`, kubernetes profiles only); absent: every launch is cold. */
  pool?: PoolPolicy;
  /** What its agents may reach (`network:`); absent: no policy (the executor's network as it is). */
  network?: NetworkSettings;
}

export interface ResolvedConfig {
  /** The file the config came from, or null when only built-in defaults apply. */
  source: string | null;
  /** sha256 (hex) of the file's text as loaded (set by loadConfig; absent when built from an object). */
  sourceSha256?: string;
  defaults: { executor: string; agent: string };
  /** The name-keyed maps have no prototype; look names up with `ownValue` all the same. */
  executors: Readonly<Record<string, ExecutorConfig>>;
  profiles: Readonly<Record<string, ProfileConfig>>;
  agents: Readonly<Record<string, AgentProfile>>;
  /** Where the inventory lives (`store:`); `{ backend: 'sqlite' }` unless configured. */
  store: StoreConfig;
  /** The egress proxy `berth serve` runs (`egress:`). */
  egress: EgressServeConfig;
}

interface LoadConfigOptions {
  /** The data dir; the default config file is `<dataDir>/berth.yaml` (optional). */
  dataDir: string;
  /** An explicit config file (`--config`); it must exist. */
  path?: string;
  /** Where the berth install lives (to find `agents/` and `dist/`). @default found from this module */
  installRoot?: string;
}

/** Reads and resolves the config. Throws ConfigFileError (I/O, YAML) or ConfigFieldError (a field). */
export function loadConfig(opts: LoadConfigOptions): ResolvedConfig {
  const file = opts.path !== undefined ? resolve(opts.path) : join(opts.dataDir, CONFIG_FILE);
  let text: string | null = null;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    // a default path under an unusable data dir counts as "no config": opening the data dir reports it
    const absent = errnoCode(err) === 'ENOENT' || errnoCode(err) === 'ENOTDIR';
    if (!absent || opts.path !== undefined) {
      throw new ConfigFileError(file, errnoCode(err) === 'ENOENT' ? 'file not found' : `cannot read (${errnoCode(err) ?? 'error'})`, null, null, { cause: err });
    }
  }
  const raw = text === null ? {} : parseYaml(text, file);
  const resolved = resolveConfig(raw, { source: text === null ? null : file, installRoot: opts.installRoot ?? findInstallRoot() });
  return text === null ? resolved : { ...resolved, sourceSha256: configTextSha256(text) };
}

/** The fingerprint `berth serve` reports of the config it loaded (compared by `berth doctor`). */
export function configTextSha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}

/** Parses YAML; errors carry line/column only (never the parser's excerpt of the file). */
export function parseYaml(text: string, file: string): unknown {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { prettyErrors: false, uniqueKeys: true, lineCounter });
  const first = doc.errors[0];
  if (first) {
    const pos = lineCounter.linePos(first.pos[0]);
    throw new ConfigFileError(file, `invalid YAML (${first.code})`, pos.line, pos.col);
  }
  if (doc.contents === null) return {};
  if (!isMap(doc.contents)) throw new ConfigFieldError('', 'must be a YAML map', file);
  return doc.toJS() as unknown;
}

/** `{ idle }` when the block is set, else nothing (the field stays absent). */
function idleOf(raw: Parameters<typeof resolveIdle>[0], field: string, source: string | null): { idle?: IdlePolicy } {
  const idle = resolveIdle(raw, field, source);
  return idle ? { idle } : {};
}

/** Validates a raw config object and merges it over the built-in defaults. */
export function resolveConfig(raw: unknown, opts: { source: string | null; installRoot: string; homeDir?: string }): ResolvedConfig {
  // zod drops a `__proto__` key without a word; a name that cannot be a map entry is refused instead
  const proto = protoKeyPath(raw);
  if (proto !== null) throw new ConfigFieldError(formatPath(proto), 'is not allowed as a name', opts.source);
  const parsed = ConfigFileSchema.safeParse(raw ?? {});
  if (!parsed.success) throw fieldErrorFromIssues(parsed.error.issues, opts.source, ConfigFileSchema);
  const cfg = parsed.data;
  const baseDir = opts.source === null ? process.cwd() : dirname(opts.source);
  const ctx = { source: opts.source, baseDir, ...(opts.homeDir !== undefined ? { homeDir: opts.homeDir } : {}) };

  const executors = emptyMap<ExecutorConfig>();
  executors[BUILTIN_EXECUTOR] = {
    name: BUILTIN_EXECUTOR,
    type: 'local',
    agentctlPath: join(opts.installRoot, 'dist', 'agentctl.cjs'),
    sandbox: 'auto',
    network: true,
    secretEnv: [],
    sandboxHide: [],
    sandboxExpose: [],
    description: 'a workspace directory and a local agentctl (built in)',
  };
  for (const [name, e] of Object.entries(cfg.executors ?? {})) {
    if (e.type === 'local') {
      executors[name] = {
        name,
        type: 'local',
        agentctlPath: e.agentctl_path !== undefined ? resolve(baseDir, e.agentctl_path) : join(opts.installRoot, 'dist', 'agentctl.cjs'),
        sandbox: e.sandbox ?? 'auto',
        network: e.network ?? true,
        secretEnv: unique(e.secret_env),
        ...resolveSandboxPaths(name, e, ctx),
        ...idleOf(e.idle, `executors.${name}.idle`, opts.source),
        description: e.description ?? '',
      };
      continue;
    }
    const connection = resolveKubernetesConnection(name, e, ctx);
    const egressProxy = resolveEgressProxyEndpoint(e.egress_proxy, `executors.${name}.egress_proxy`, opts.source);
    executors[name] = { name, type: 'kubernetes', connection, ...connection, egressProxy, secretEnv: unique(e.secret_env), ...idleOf(e.idle, `executors.${name}.idle`, opts.source), description: e.description ?? '' };
  }

  const profiles = emptyMap<ProfileConfig>();
  for (const [name, p] of Object.entries(cfg.profiles ?? {})) profiles[name] = resolveProfileEntry(name, p, executors, ctx);

  const agents = resolveAgents(cfg.agents, opts.source);

  const defaults = { executor: cfg.defaults?.executor ?? BUILTIN_EXECUTOR, agent: cfg.defaults?.agent ?? BUILTIN_AGENT };
  if (!ownValue(executors, defaults.executor) && !ownValue(profiles, defaults.executor)) {
    throw new ConfigFieldError('defaults.executor', 'must name an entry of executors or profiles', opts.source);
  }
  const direct = directLaunchProblem({ executors, profiles }, defaults.executor);
  if (direct !== null) throw new ConfigFieldError('defaults.executor', direct, opts.source);
  if (!ownValue(agents, defaults.agent)) throw new ConfigFieldError('defaults.agent', 'must name an entry of agents', opts.source);

  const egress = resolveEgressServe(cfg.egress, opts.source, (p) => resolve(baseDir, p));
  brokerSecretProblem(profiles, opts.source);
  return { source: opts.source, defaults, executors, profiles, agents, store: resolveStore(cfg.store, opts.source), egress };
}

type RawProfile = NonNullable<z.infer<typeof ConfigFileSchema>['profiles']>[string];

/** One entry of `profiles:` resolved against the executors. */
function resolveProfileEntry(name: string, p: RawProfile, executors: Readonly<Record<string, ExecutorConfig>>, ctx: { source: string | null; baseDir: string; homeDir?: string }): ProfileConfig {
  const executor = ownValue(executors, p.executor);
  if (!executor) {
    throw new ConfigFieldError(`profiles.${name}.executor`, `must name an entry of executors (${Object.keys(executors).join(', ')})`, ctx.source);
  }
  if (ownValue(executors, name)) throw new ConfigFieldError(`profiles.${name}`, 'must not share its name with an executor', ctx.source);
  if (executor.type === 'kubernetes' && p.kubernetes === undefined) {
    throw new ConfigFieldError(`profiles.${name}.kubernetes`, 'is required for a profile of a kubernetes executor', ctx.source);
  }
  if (executor.type !== 'kubernetes' && p.kubernetes !== undefined) {
    throw new ConfigFieldError(`profiles.${name}.kubernetes`, `is only allowed on a profile of a kubernetes executor ('${p.executor}' is ${executor.type})`, ctx.source);
  }
  const kubernetes = p.kubernetes === undefined ? null : resolveKubernetesProfile(name, p.kubernetes, ctx);
  const idle = idleOf(p.idle, `profiles.${name}.idle`, ctx.source);
  if (p.pool !== undefined && executor.type !== 'kubernetes') {
    throw new ConfigFieldError(`profiles.${name}.pool`, `is only allowed on a profile of a kubernetes executor ('${p.executor}' is ${executor.type})`, ctx.source);
  }
  const pool = resolvePool(p.pool, `profiles.${name}.pool`, ctx.source);
  const network = resolveNetwork(p.network, `profiles.${name}.network`, [...unique(p.secret_env), ...executor.secretEnv], ctx.source);
  if (network !== undefined) networkProblem(name, network, executor, pool, ctx.source);
  return {
    name,
    executor: p.executor,
    env: p.env ?? {},
    secretEnv: unique(p.secret_env),
    ...idle,
    ...(pool ? { pool } : {}),
    ...(network ? { network } : {}),
    description: p.description ?? '',
    kubernetes,
  };
}

/** The proxy reads one key per provider: every profile brokering a provider must name the same secret. */
function brokerSecretProblem(profiles: Readonly<Record<string, ProfileConfig>>, source: string | null): void {
  const first = new Map<string, { profile: string; secret: string }>();
  for (const p of Object.values(profiles)) {
    for (const [provider, secret] of Object.entries(p.network?.brokers ?? {})) {
      const seen = first.get(provider);
      if (seen === undefined) first.set(provider, { profile: p.name, secret });
      else if (seen.secret !== secret) {
        throw new ConfigFieldError(`profiles.${p.name}.network.brokers.${provider}`, `must name the same secret as profiles.${seen.profile} (${seen.secret}): the proxy holds one key per provider`, source);
      }
    }
  }
}

/** What a profile's `network:` needs of its executor: a proxy the Pods can reach, no pool (yet). */
function networkProblem(name: string, network: NetworkSettings, executor: ExecutorConfig, pool: PoolPolicy | undefined, source: string | null): void {
  const field = `profiles.${name}.network`;
  const proxied = network.egress === 'allowlist' || Object.keys(network.brokers).length > 0;
  if (executor.type === 'kubernetes' && proxied && executor.egressProxy === null) {
    throw new ConfigFieldError(field, `needs the egress proxy: set executors.${executor.name}.egress_proxy.url (where its Pods reach berth serve's egress.listen, or the chart's proxy Service)`, source);
  }
  if (executor.type === 'local' && executor.sandbox === 'none') {
    throw new ConfigFieldError(field, `needs the sandbox: executor '${executor.name}' runs agents with sandbox: none, so nothing could hold them to the policy`, source);
  }
  if (executor.type === 'local' && network.egress === 'open') {
    throw new ConfigFieldError(`${field}.egress`, `open is for kubernetes executors: a local sandbox has its own network or none (use allowlist or deny, or no network: block)`, source);
  }
  if (pool !== undefined && pool.size > 0) throw new ConfigFieldError(`profiles.${name}.pool`, 'cannot be combined with network: yet (pool members are made before a session exists)', source);
}

/**
 * The error to report of several issues: an unknown key comes first, as it is usually the cause of
 * the others (a misspelled `comand:` also leaves `command` missing); the missing key it resembles is
 * suggested.
 */
function fieldErrorFromIssues(issues: readonly z.core.$ZodIssue[], source: string | null, schema: z.ZodType): ConfigFieldError {
  const unknown = issues.find((i) => i.code === 'unrecognized_keys');
  if (unknown === undefined || unknown.code !== 'unrecognized_keys') return fieldErrorFromIssue(issues[0], source);
  const parent = formatPath(unknown.path);
  const key = unknown.keys[0] ?? '';
  const suggestion = closestKey(
    key,
    [
      ...issues.filter((i) => i !== unknown && i.path.length === unknown.path.length + 1 && formatPath(i.path.slice(0, -1)) === parent).map((i) => String(i.path[i.path.length - 1])),
      ...knownKeysAt(schema, unknown.path),
    ],
  );
  const path = parent === '' ? key : `${parent}.${key}`;
  return new ConfigFieldError(path, `is not a known setting${suggestion !== undefined ? ` (did you mean '${suggestion}'?)` : ''}`, source);
}

/** The keys the object schema at `path` of `schema` knows (none where the path goes through a union). */
function knownKeysAt(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  let node: z.ZodType | undefined = schema;
  const unwrap = (n: z.ZodType): z.ZodType => (n instanceof z.ZodOptional || n instanceof z.ZodDefault ? unwrap(n.unwrap() as z.ZodType) : n);
  for (const step of path) {
    if (node === undefined) return [];
    const n: z.ZodType = unwrap(node);
    if (n instanceof z.ZodObject) node = (n.shape as Record<string, z.ZodType>)[String(step)];
    else if (n instanceof z.ZodRecord) node = n.valueType as z.ZodType;
    else return [];
  }
  const last = node === undefined ? undefined : unwrap(node);
  return last instanceof z.ZodObject ? Object.keys(last.shape) : [];
}

function fieldErrorFromIssue(issue: z.core.$ZodIssue | undefined, source: string | null): ConfigFieldError {
  if (!issue) return new ConfigFieldError('', 'is invalid', source);
  const path = formatPath(issue.path);
  if (issue.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    return new ConfigFieldError(path === '' ? key : `${path}.${key}`, 'is not a known setting', source);
  }
  if (issue.code === 'invalid_key') return new ConfigFieldError(path, issue.issues[0]?.message ?? 'is not a valid name', source);
  let detail = issue.message;
  if (detail.startsWith('Invalid input')) detail = `has the wrong type (${detail.replace(/^Invalid input: /, '')})`;
  return new ConfigFieldError(path, detail, source);
}

/** A field path as errors show it: `executors.local.secret_env[1]`. */
function formatPath(path: readonly PropertyKey[]): string {
  return path.reduce<string>((out, key) => (typeof key === 'number' ? `${out}[${key}]` : out === '' ? String(key) : `${out}.${String(key)}`), '');
}

/** The names in order, each once. */
function unique(names: readonly string[] | undefined): string[] {
  return [...new Set(names ?? [])];
}

/** The berth install directory: the nearest ancestor of this module holding `package.json` and `agents/`. */
export function findInstallRoot(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'agents'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
  }
  return resolve(from, '..', '..');
}

/** The agent argv with `{{prompt}}` replaced. */
export function renderAgentCommand(agent: AgentProfile, prompt: string): string[] {
  return agent.command.map((arg) => arg.split(PROMPT_PLACEHOLDER).join(prompt));
}

/**
 * Why `name` cannot be launched as given, or null when it can. A kubernetes executor entry is only a
 * connection (cluster, namespace): what a session runs in — the image, the workspace — is in a
 * profile, and there is no image Berth could rightly default to. So `--executor cluster` names the
 * executor's profiles instead of guessing; picking "the only profile" would silently change meaning
 * the day a second one is added.
 */
export function directLaunchProblem(config: Pick<ResolvedConfig, 'executors' | 'profiles'>, name: string): string | null {
  if (ownValue(config.profiles, name) !== undefined) return null;
  const executor = ownValue(config.executors, name);
  if (executor?.type !== 'kubernetes') return null;
  const own = Object.values(config.profiles)
    .filter((p) => p.executor === name)
    .map((p) => p.name);
  const intro = `'${name}' is a kubernetes executor (a cluster connection) and has no Pod template`;
  return own.length > 0
    ? `${intro}: name one of its profiles instead (${own.join(', ')})`
    : `${intro}: add a profile with "executor: ${name}" and a "kubernetes:" block, then name that profile`;
}
