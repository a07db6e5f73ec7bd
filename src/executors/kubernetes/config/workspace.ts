/**
 * The workspace rules of a profile (spec §2.2/§2.3): which fields each mode takes, their defaults
 * and their values. A field that does not apply to the chosen mode is an error rather than being
 * ignored, so a `claim_name` left over from an edit never makes Berth create a fresh PVC unnoticed.
 * @module
 */
import type { AccessMode, WorkspaceConfig } from '../types.js';
import { PROFILE_DEFAULTS } from './defaults.js';
import { ConfigFieldError } from '../../../shared/config-field-error.js';
import { isDns1123Subdomain } from './identifiers.js';
import { field } from './paths.js';
import { isPositiveQuantity } from './quantity.js';

const ACCESS_MODES: readonly AccessMode[] = ['ReadWriteOnce', 'ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOncePod'];

/** The `workspace:` block; absent fields are undefined (or null). */
export interface WorkspaceInput {
  mode?: string | undefined;
  size?: string | null | undefined;
  storageClass?: string | null | undefined;
  accessModes?: readonly string[] | null | undefined;
  claimName?: string | null | undefined;
}

/** Validates the block at `path` (`profiles.k8s.kubernetes.workspace`) and fills in the defaults. */
export function parseWorkspace(input: WorkspaceInput | undefined, path: string, file: string | null = null): WorkspaceConfig {
  const fail = (key: string, detail: string) => new ConfigFieldError(field(path, key), detail, file);
  const w = input ?? {};
  const mode = w.mode ?? PROFILE_DEFAULTS.workspaceMode;
  const present = {
    claim_name: w.claimName !== undefined && w.claimName !== null,
    size: w.size !== undefined && w.size !== null,
    storage_class: w.storageClass !== undefined && w.storageClass !== null,
    access_modes: w.accessModes !== undefined && w.accessModes !== null,
  };
  const mustBeEmpty = (keys: readonly (keyof typeof present)[], forMode: string) => {
    for (const key of keys) if (present[key]) throw fail(key, `must be empty for ${forMode}`);
  };

  switch (mode) {
    case 'managed_pvc': {
      mustBeEmpty(['claim_name'], 'managed_pvc');
      const size = w.size ?? PROFILE_DEFAULTS.workspaceSize;
      if (!isPositiveQuantity(size)) throw fail('size', 'must be a positive Kubernetes quantity');
      const storageClass = w.storageClass ?? null;
      if (storageClass !== null && !isDns1123Subdomain(storageClass)) throw fail('storage_class', 'must be a valid storage class name');
      const accessModes = w.accessModes ?? PROFILE_DEFAULTS.accessModes;
      if (accessModes.length === 0) throw fail('access_modes', 'must contain at least one access mode');
      const unsupported = accessModes.find((m) => !(ACCESS_MODES as readonly string[]).includes(m));
      if (unsupported !== undefined) throw fail('access_modes', `contains an unsupported access mode (${ACCESS_MODES.join(', ')})`);
      return { mode, size, storageClass, accessModes: [...new Set(accessModes)] as AccessMode[], claimName: null };
    }
    case 'empty_dir':
      mustBeEmpty(['claim_name', 'size', 'storage_class', 'access_modes'], 'empty_dir');
      return { mode, size: null, storageClass: null, accessModes: [], claimName: null };
    case 'existing_claim': {
      const claimName = w.claimName ?? null;
      if (claimName === null || claimName === '') throw fail('claim_name', 'is required for existing_claim');
      if (!isDns1123Subdomain(claimName)) throw fail('claim_name', 'must be a valid claim name');
      mustBeEmpty(['size', 'storage_class', 'access_modes'], 'existing_claim');
      return { mode, size: null, storageClass: null, accessModes: [], claimName };
    }
    default:
      throw fail('mode', 'must be managed_pvc, empty_dir, or existing_claim');
  }
}
