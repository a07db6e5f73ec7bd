/**
 * The profile snapshot recorded on a session: the canonical JSON of everything a later Pod of the
 * session is built from (platform, main container, template text, workspace, scripts, budgets), so
 * a resume or a replacement Pod follows what the session launched with, not an edited profile.
 * Profile `env` values are not part of it (they are never recorded). Decoding re-validates: a
 * snapshot is only as trustworthy as the row it was read from. Also the sha256 hashes recorded in
 * the inventory metadata.
 * @module
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { KubernetesConnection, KubernetesProfile } from '../types.js';
import { ConfigFieldError } from '../../../shared/config-field-error.js';
import { ProfileSnapshotError } from './errors.js';
import { parseKubernetesProfile } from './profile.js';

const SNAPSHOT_VERSION = 1;

const SnapshotSchema = z.strictObject({
  version: z.number(),
  platform: z.string(),
  mainContainer: z.string(),
  templateText: z.string(),
  workspace: z.strictObject({
    mode: z.string(),
    size: z.string().nullable(),
    storageClass: z.string().nullable(),
    accessModes: z.array(z.string()),
    claimName: z.string().nullable(),
  }),
  setupScript: z.string(),
  cleanupScript: z.string(),
  budgets: z.strictObject({
    pvcBindingSeconds: z.number(),
    schedulingSeconds: z.number(),
    imagePullSeconds: z.number(),
    containerStartSeconds: z.number(),
    // added later: a snapshot recorded before has none (the defaults apply)
    uploadSeconds: z.number().optional(),
    cloneSeconds: z.number().optional(),
    setupScriptSeconds: z.number().optional(),
  }),
});
type Snapshot = z.infer<typeof SnapshotSchema>;

/** The snapshot of a validated profile (canonical JSON: sorted keys, no whitespace). */
export function encodeProfileSnapshot(profile: KubernetesProfile): string {
  const snapshot: Snapshot = {
    version: SNAPSHOT_VERSION,
    platform: profile.platform,
    mainContainer: profile.mainContainer,
    templateText: profile.templateText,
    workspace: { ...profile.workspace, accessModes: [...profile.workspace.accessModes] },
    setupScript: profile.setupScript,
    cleanupScript: profile.cleanupScript,
    budgets: { ...profile.budgets },
  };
  return canonicalJson(snapshot);
}

/** Decodes and re-validates a snapshot; a corrupt or outdated one is a ProfileSnapshotError. */
export function decodeProfileSnapshot(json: string): KubernetesProfile {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw new ProfileSnapshotError('is not valid JSON', { cause: err });
  }
  const parsed = SnapshotSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new ProfileSnapshotError(`has an invalid shape at ${issue?.path.map(String).join('.') || '(root)'}`, { cause: parsed.error });
  }
  const s = parsed.data;
  if (s.version !== SNAPSHOT_VERSION) throw new ProfileSnapshotError(`has unsupported version ${s.version} (expected ${SNAPSHOT_VERSION})`);
  const w = s.workspace;
  try {
    return parseKubernetesProfile(
      {
        platform: s.platform,
        mainContainer: s.mainContainer,
        templateText: s.templateText,
        // the resolved form writes "not applicable" as null / []; the input form as absent
        workspace: { mode: w.mode, size: w.size, storageClass: w.storageClass, accessModes: w.mode === 'managed_pvc' ? w.accessModes : null, claimName: w.claimName },
        setupScript: s.setupScript,
        cleanupScript: s.cleanupScript,
        budgets: s.budgets,
      },
      { path: 'snapshot' },
    );
  } catch (err) {
    if (err instanceof ConfigFieldError) throw new ProfileSnapshotError(`no longer validates (${err.message})`, { cause: err });
    throw err;
  }
}

/** sha256 (hex) of the profile snapshot: equal hashes mean Pods composed alike. */
export function profileHash(profile: KubernetesProfile): string {
  return sha256(encodeProfileSnapshot(profile));
}

/** sha256 (hex) of the canonical connection (no secrets live in it). */
export function connectionHash(connection: KubernetesConnection): string {
  return sha256(canonicalJson(connection));
}

/** sha256 (hex) of the template text as written. */
export function templateHash(profile: Pick<KubernetesProfile, 'templateText'>): string {
  return sha256(profile.templateText);
}

/** JSON with object keys sorted at every level and no whitespace; `undefined` members are left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new TypeError('canonicalJson: non-finite number');
    return JSON.stringify(value) ?? 'null';
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

function sha256(text: string): string {
  return createHash('sha256').update(text, 'utf8').digest('hex');
}
