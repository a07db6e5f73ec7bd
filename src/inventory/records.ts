/**
 * Pure mapping between inventory rows (SQLite shapes) and domain records, plus the filter that decides
 * which runtime metadata keys may be persisted. No I/O here.
 * @module
 */
import { z } from 'zod';
import { InventoryCorruptError, InventoryMetadataError } from './errors.js';

/** A launch stage as persisted (structurally the controller's `StageRecord`). */
interface PersistedStage {
  name: string;
  status: 'running' | 'waiting' | 'succeeded' | 'failed';
  startedAt: string;
  endedAt: string | null;
  durationMs: number | null;
  reason: string | null;
  message: string | null;
  waits?: { at: string; reason: string; message: string }[];
}

interface PersistedRepository {
  /** Never with credentials: they are split off into the encrypted secret store. */
  url?: string;
  path?: string;
  branch?: string;
  /** True when a credential for `url` is held in the secret store. */
  credentials?: boolean;
}

export interface SessionRequestData {
  env: Record<string, string>;
  /** Names of approved secrets only; values are never stored here. */
  secretEnv: string[];
  prompt: string | null;
  /** Snapshot of the agent profile at launch (argv after prompt substitution, env; never secrets). */
  agentCommand: string[];
  agentEnv: Record<string, string>;
  /** How the agent gets the prompt besides BERTH_PROMPT when not in argv (the profile's `prompt:` at launch). */
  promptInput?: 'stdin' | 'file';
  /** The agent speaks the Agent Client Protocol (the profile's `protocol: acp` at launch): the prompt is its first turn. Absent: raw. */
  protocol?: 'acp';
  /** ACP only: who answers its permission requests (the profile's `approve:` at launch). */
  approve?: 'ask' | 'auto-edits' | 'auto-all';
  /** The agent keeps state in its per-session directory (`{{agent_state}}`): the directory's name. */
  agentState?: string;
  /** ACP only: the session mode set once its session is open. */
  agentMode?: string;
  /** Login files (paths only) copied from the controller's host into the agent's state at each start, unless there already. */
  loginFiles?: { host: string; state: string }[];
  /** Files the agent's state directory is seeded with, unless there (the agent's own config). */
  stateFiles?: { path: string; content: string }[];
  /** Snapshot of the executor profile env at launch. */
  profileEnv: Record<string, string>;
  /**
   * The executor profile as resolved at launch (structurally the executors' `ExecutorProfileSnapshot`):
   * a resume or a replacement Pod is built from it, not from a profile edited since. Absent on rows
   * written before it was recorded.
   */
  profile?: PersistedProfileSnapshot;
}

interface PersistedProfileSnapshot {
  executor: string;
  profile: string | null;
  type: 'local' | 'kubernetes';
  settings: Record<string, string>;
  env: Record<string, string>;
}

export interface SessionRecord {
  id: string;
  name: string | null;
  executor: string;
  agent: string;
  repository: PersistedRepository;
  request: SessionRequestData;
  state: string;
  error: { message: string; stage: string | null } | null;
  stages: PersistedStage[];
  workspacePath: string | null;
  createdAt: string;
  updatedAt: string;
}

/** Metadata of a runtime row: string values only, checked by {@link persistentMetadata}. */
type RuntimeMetadata = Record<string, string>;

export interface RuntimeRecord {
  sessionId: string;
  instanceId: string;
  executor: string;
  /** Checkpoint state (`workspace_created`, `agentctl_started` …), then `ready`, `stopped` or `failed`. */
  state: string;
  metadata: RuntimeMetadata;
  stages: PersistedStage[];
  /** Secret references: a name (e.g. `AGENTCTL_AUTH_TOKEN`) → the id of an encrypted secret. */
  secretRefs: Record<string, string>;
  createdAt: string;
  /** The compare-and-swap version of the row. */
  updatedAt: string;
}

export interface SessionRow {
  id: string;
  name: string | null;
  executor: string;
  agent: string;
  repository: string;
  request: string;
  state: string;
  error: string | null;
  stages: string;
  workspace_path: string | null;
  created_at: string;
  updated_at: string;
}

export interface RuntimeRow {
  session_id: string;
  instance_id: string;
  executor: string;
  state: string;
  metadata: string;
  stages: string;
  secret_refs: string;
  created_at: string;
  updated_at: string;
}

/** Runtime states that end a launch; everything else is a provisional checkpoint. */
const FINAL_RUNTIME_STATES = ['ready', 'stopped', 'failed'] as const;

export function isProvisionalState(state: string): boolean {
  return !(FINAL_RUNTIME_STATES as readonly string[]).includes(state);
}

/** Prefix of metadata keys naming a secret reference (spec Appendix B). */
export const SECRET_ID_KEY_PREFIX = 'env_secret_id_';

/**
 * Metadata keys that may be persisted: these keys every executor shares, the secret references
 * (SECRET_ID_KEY_PREFIX), and the keys under an executor's own prefix, which each executor type
 * declares (`ExecutorCapabilities.metadataKeyPrefix`) and the store is opened with. Anything else is
 * refused, so a raw token that slips into the metadata map never reaches the database.
 */
const PERSISTABLE_KEYS = new Set([
  'inventory_state',
  'launch_kind',
  'agentctl_instance_id',
  'agent_process_id',
  'agent_lost',
  'executor_id',
  'executor_profile_id',
  'is_remote',
  'cleanup_script',
]);
/** Key fragments that mark a value as secret even under an allowed prefix. */
const SECRET_KEY_FRAGMENTS = ['token', 'nonce', 'password', 'secret', 'credential', 'private_key', 'api_key'];

/**
 * The metadata to persist, checked key by key: a key that is not persistable is an error, never a
 * silent loss (a dropped Pod name would break a reconnect) and never a silent store (a raw token that
 * slips into the metadata map must not reach the database: spec §4.1). The error names the key, never
 * the value. `keyPrefixes`: the executors' own key prefixes (`local_` …).
 */
export function persistentMetadata(metadata: Readonly<Record<string, unknown>>, keyPrefixes: readonly string[]): RuntimeMetadata {
  const out: RuntimeMetadata = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== 'string') throw new InventoryMetadataError(key, 'must be a string');
    if (!isPersistableKey(key, keyPrefixes)) {
      throw new InventoryMetadataError(key, looksSecret(key) ? 'looks like a secret, which is never persisted' : 'is not a known metadata key');
    }
    out[key] = value;
  }
  return out;
}

function looksSecret(key: string): boolean {
  const lower = key.toLowerCase();
  return SECRET_KEY_FRAGMENTS.some((f) => lower.includes(f)) || (key.startsWith(SECRET_ID_KEY_PREFIX) && !/^env_secret_id_[A-Z0-9_]+$/.test(key));
}

function isPersistableKey(key: string, keyPrefixes: readonly string[]): boolean {
  if (key.startsWith(SECRET_ID_KEY_PREFIX)) return /^env_secret_id_[A-Z0-9_]+$/.test(key);
  const lower = key.toLowerCase();
  if (SECRET_KEY_FRAGMENTS.some((f) => lower.includes(f))) return false;
  return PERSISTABLE_KEYS.has(key) || keyPrefixes.some((p) => p !== '' && key.startsWith(p));
}

const StageSchema = z.object({
  name: z.string(),
  status: z.enum(['running', 'waiting', 'succeeded', 'failed']),
  startedAt: z.string(),
  endedAt: z.string().nullable(),
  durationMs: z.number().nullable(),
  reason: z.string().nullable(),
  message: z.string().nullable(),
  waits: z.array(z.object({ at: z.string(), reason: z.string(), message: z.string() })).optional(),
});
const StagesSchema = z.array(StageSchema);
const RepositorySchema = z.object({ url: z.string().optional(), path: z.string().optional(), branch: z.string().optional(), credentials: z.boolean().optional() });
const RequestSchema = z.object({
  env: z.record(z.string(), z.string()),
  secretEnv: z.array(z.string()),
  prompt: z.string().nullable(),
  agentCommand: z.array(z.string()),
  agentEnv: z.record(z.string(), z.string()),
  promptInput: z.enum(['stdin', 'file']).optional(),
  protocol: z.literal('acp').optional(),
  approve: z.enum(['ask', 'auto-edits', 'auto-all']).optional(),
  agentState: z.string().optional(),
  agentMode: z.string().optional(),
  loginFiles: z.array(z.object({ host: z.string(), state: z.string() })).optional(),
  stateFiles: z.array(z.object({ path: z.string(), content: z.string() })).optional(),
  profileEnv: z.record(z.string(), z.string()),
  profile: z
    .object({
      executor: z.string(),
      profile: z.string().nullable(),
      type: z.enum(['local', 'kubernetes']),
      settings: z.record(z.string(), z.string()),
      env: z.record(z.string(), z.string()),
    })
    .optional(),
});
const ErrorSchema = z.object({ message: z.string(), stage: z.string().nullable() }).nullable();
const StringMapSchema = z.record(z.string(), z.string());

/** Parses a JSON column against `schema`; InventoryCorruptError names the table, row and column. */
export function decode<T>(schema: z.ZodType<T>, text: string, table: string, key: string, column: string): T {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new InventoryCorruptError(table, key, `${column}: not JSON`);
  }
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InventoryCorruptError(table, key, `${column}${issue ? `.${issue.path.join('.')}: ${issue.message}` : ''}`);
  }
  return parsed.data;
}

export function sessionFromRow(row: SessionRow): SessionRecord {
  const t = 'sessions';
  return {
    id: row.id,
    name: row.name,
    executor: row.executor,
    agent: row.agent,
    repository: decode(RepositorySchema, row.repository, t, row.id, 'repository'),
    request: decode(RequestSchema, row.request, t, row.id, 'request'),
    state: row.state,
    error: row.error === null ? null : decode(ErrorSchema, row.error, t, row.id, 'error'),
    stages: decode(StagesSchema, row.stages, t, row.id, 'stages'),
    workspacePath: row.workspace_path,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

export function sessionToRow(record: SessionRecord): SessionRow {
  return {
    id: record.id,
    name: record.name,
    executor: record.executor,
    agent: record.agent,
    repository: JSON.stringify(record.repository),
    request: JSON.stringify(record.request),
    state: record.state,
    error: record.error === null ? null : JSON.stringify(record.error),
    stages: JSON.stringify(record.stages),
    workspace_path: record.workspacePath,
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}

export function runtimeFromRow(row: RuntimeRow): RuntimeRecord {
  const t = 'runtime_inventory';
  return {
    sessionId: row.session_id,
    instanceId: row.instance_id,
    executor: row.executor,
    state: row.state,
    // read back as stored: every key was checked on the way in (a newer version's keys are kept, not dropped)
    metadata: decode(StringMapSchema, row.metadata, t, row.session_id, 'metadata'),
    stages: decode(StagesSchema, row.stages, t, row.session_id, 'stages'),
    secretRefs: decode(StringMapSchema, row.secret_refs, t, row.session_id, 'secret_refs'),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

/** The row for a record; metadata is checked by {@link persistentMetadata} here, the single write path. */
export function runtimeToRow(record: RuntimeRecord, keyPrefixes: readonly string[]): RuntimeRow {
  return {
    session_id: record.sessionId,
    instance_id: record.instanceId,
    executor: record.executor,
    state: record.state,
    metadata: JSON.stringify(persistentMetadata(record.metadata, keyPrefixes)),
    stages: JSON.stringify(record.stages),
    secret_refs: JSON.stringify(record.secretRefs),
    created_at: record.createdAt,
    updated_at: record.updatedAt,
  };
}

/**
 * The next `updated_at` of a row: now, but strictly after the previous value, so the
 * compare-and-swap version changes on every write even within one millisecond.
 */
export function nextTimestamp(previous: string | null, now: Date): string {
  if (previous === null) return now.toISOString();
  const prev = Date.parse(previous);
  const t = Number.isNaN(prev) || now.getTime() > prev ? now.getTime() : prev + 1;
  return new Date(t).toISOString();
}
