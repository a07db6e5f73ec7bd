import { describe, expect, it } from 'vitest';
import { ConfigFieldError } from '../../../shared/config-field-error.js';
import { parseWorkspace, type WorkspaceInput } from './workspace.js';

const W = 'profiles.k8s.kubernetes.workspace';

describe('parseWorkspace', () => {
  it('defaults to a managed 10Gi ReadWriteOnce PVC on the default storage class', () => {
    expect(parseWorkspace(undefined, W)).toEqual({ mode: 'managed_pvc', size: '10Gi', storageClass: null, accessModes: ['ReadWriteOnce'], claimName: null });
    expect(parseWorkspace({ mode: 'managed_pvc' }, W)).toEqual(parseWorkspace(undefined, W));
  });

  it('keeps a managed PVC’s settings', () => {
    expect(parseWorkspace({ size: '1.5Gi', storageClass: 'fast.ssd', accessModes: ['ReadWriteOncePod', 'ReadWriteOncePod'] }, W)).toEqual({
      mode: 'managed_pvc',
      size: '1.5Gi',
      storageClass: 'fast.ssd',
      accessModes: ['ReadWriteOncePod'],
      claimName: null,
    });
  });

  it('takes nothing for empty_dir', () => {
    expect(parseWorkspace({ mode: 'empty_dir' }, W)).toEqual({ mode: 'empty_dir', size: null, storageClass: null, accessModes: [], claimName: null });
  });

  it('takes only the claim name for existing_claim', () => {
    expect(parseWorkspace({ mode: 'existing_claim', claimName: 'team-claim' }, W)).toEqual({
      mode: 'existing_claim',
      size: null,
      storageClass: null,
      accessModes: [],
      claimName: 'team-claim',
    });
  });

  it.each<[WorkspaceInput, string, string]>([
    [{ mode: 'hostpath' }, 'mode', 'must be managed_pvc, empty_dir, or existing_claim'],
    [{ size: '0' }, 'size', 'must be a positive Kubernetes quantity'],
    [{ size: '-1Gi' }, 'size', 'must be a positive Kubernetes quantity'],
    [{ size: '10GB' }, 'size', 'must be a positive Kubernetes quantity'],
    [{ size: '' }, 'size', 'must be a positive Kubernetes quantity'],
    [{ claimName: 'c' }, 'claim_name', 'must be empty for managed_pvc'],
    [{ storageClass: 'Fast_SSD' }, 'storage_class', 'must be a valid storage class name'],
    [{ accessModes: [] }, 'access_modes', 'must contain at least one access mode'],
    [{ accessModes: ['ReadWriteOnce', 'RWX'] }, 'access_modes', 'contains an unsupported access mode (ReadWriteOnce, ReadOnlyMany, ReadWriteMany, ReadWriteOncePod)'],
    [{ mode: 'empty_dir', claimName: 'c', size: '1Gi' }, 'claim_name', 'must be empty for empty_dir'],
    [{ mode: 'empty_dir', size: '1Gi', storageClass: 's' }, 'size', 'must be empty for empty_dir'],
    [{ mode: 'empty_dir', storageClass: 's', accessModes: ['ReadWriteOnce'] }, 'storage_class', 'must be empty for empty_dir'],
    [{ mode: 'empty_dir', accessModes: [] }, 'access_modes', 'must be empty for empty_dir'],
    [{ mode: 'existing_claim' }, 'claim_name', 'is required for existing_claim'],
    [{ mode: 'existing_claim', claimName: 'Team_Claim' }, 'claim_name', 'must be a valid claim name'],
    [{ mode: 'existing_claim', claimName: 'c', size: '1Gi' }, 'size', 'must be empty for existing_claim'],
    [{ mode: 'existing_claim', claimName: 'c', storageClass: 's' }, 'storage_class', 'must be empty for existing_claim'],
    [{ mode: 'existing_claim', claimName: 'c', accessModes: ['ReadWriteOnce'] }, 'access_modes', 'must be empty for existing_claim'],
  ])('rejects %j at %s', (input, key, detail) => {
    let caught: unknown;
    try {
      parseWorkspace(input, W);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ConfigFieldError);
    expect([(caught as ConfigFieldError).path, (caught as ConfigFieldError).detail]).toEqual([`${W}.${key}`, detail]);
  });
});
