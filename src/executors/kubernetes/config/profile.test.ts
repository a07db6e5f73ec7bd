import { describe, expect, it } from 'vitest';
import { BUDGET_DEFAULTS } from './defaults.js';
import { ConfigFieldError } from '../../../shared/config-field-error.js';
import { parseKubernetesProfile, type KubernetesProfileInput } from './profile.js';

const K = 'profiles.k8s.kubernetes';
const TEMPLATE = 'spec:\n  containers:\n    - name: agent\n      image: registry.example/agent:1.2\n';

function fieldError(input: KubernetesProfileInput, templateField?: 'pod_template' | 'pod_template_file'): [string, string] {
  try {
    parseKubernetesProfile(input, { path: K, ...(templateField ? { templateField } : {}) });
  } catch (err) {
    if (err instanceof ConfigFieldError) return [err.path, err.detail];
    throw err;
  }
  throw new Error('expected a ConfigFieldError');
}

describe('parseKubernetesProfile', () => {
  it('fills in every default around a template that names only an image', () => {
    const p = parseKubernetesProfile({ templateText: TEMPLATE }, { path: K });
    expect(p).toMatchObject({
      platform: 'linux/amd64',
      mainContainer: 'agent',
      templateText: TEMPLATE,
      workspace: { mode: 'managed_pvc', size: '10Gi', storageClass: null, accessModes: ['ReadWriteOnce'], claimName: null },
      setupScript: '',
      cleanupScript: '',
      budgets: { pvcBindingSeconds: 120, schedulingSeconds: 60, imagePullSeconds: 300, containerStartSeconds: 120, uploadSeconds: 300, cloneSeconds: 600, setupScriptSeconds: 600 },
    });
    expect(p.template.spec?.containers[0]?.image).toBe('registry.example/agent:1.2');
  });

  it('keeps every setting given', () => {
    const p = parseKubernetesProfile(
      {
        platform: 'linux/arm64',
        mainContainer: 'worker',
        templateText: TEMPLATE.replace('name: agent', 'name: worker'),
        workspace: { mode: 'empty_dir' },
        setupScript: 'npm ci',
        cleanupScript: 'rm -rf node_modules',
        budgets: { imagePullSeconds: 900 },
      },
      { path: K },
    );
    expect(p).toMatchObject({ platform: 'linux/arm64', mainContainer: 'worker', setupScript: 'npm ci', cleanupScript: 'rm -rf node_modules' });
    expect(p.workspace.mode).toBe('empty_dir');
    expect(p.budgets).toEqual({ ...BUDGET_DEFAULTS, imagePullSeconds: 900 });
  });

  it.each<[string, KubernetesProfileInput, string, string]>([
    ['a platform', { platform: 'linux/riscv64', templateText: TEMPLATE }, `${K}.platform`, 'must be linux/amd64 or linux/arm64'],
    ['a main container name', { mainContainer: 'Agent', templateText: TEMPLATE }, `${K}.main_container`, 'must be a valid container name'],
    ['a missing template', {}, `${K}.pod_template`, 'is required (or pod_template_file)'],
    ['a blank template', { templateText: ' ' }, `${K}.pod_template`, 'is required'],
    ['the template rules', { templateText: TEMPLATE.replace('image:', 'imagee:') }, `${K}.pod_template.spec.containers[0].imagee`, "is not a known field (did you mean 'image'?)"],
    ['the reserved rules', { templateText: `${TEMPLATE}      command: [sh]\n` }, `${K}.pod_template.spec.containers[0].command`, 'is reserved for Berth'],
    ['the main container', { mainContainer: 'worker', templateText: TEMPLATE }, `${K}.pod_template.spec.containers`, 'must contain the configured main container (worker)'],
    ['the workspace rules', { templateText: TEMPLATE, workspace: { size: '0' } }, `${K}.workspace.size`, 'must be a positive Kubernetes quantity'],
    ['a budget of zero', { templateText: TEMPLATE, budgets: { schedulingSeconds: 0 } }, `${K}.timeouts.scheduling_seconds`, 'must be an integer between 1 and 3600'],
    ['a fractional budget', { templateText: TEMPLATE, budgets: { pvcBindingSeconds: 1.5 } }, `${K}.timeouts.pvc_binding_seconds`, 'must be an integer between 1 and 3600'],
    ['a budget over an hour', { templateText: TEMPLATE, budgets: { containerStartSeconds: 3601 } }, `${K}.timeouts.container_start_seconds`, 'must be an integer between 1 and 3600'],
    ['a setup script budget of zero', { templateText: TEMPLATE, budgets: { setupScriptSeconds: 0 } }, `${K}.timeouts.setup_script_seconds`, 'must be an integer between 1 and 3600'],
  ])('checks %s', (_what, input, path, detail) => {
    expect(fieldError(input)).toEqual([path, detail]);
  });

  it('names template errors under pod_template_file when the text came from the file', () => {
    expect(fieldError({ templateText: `${TEMPLATE}      args: [x]\n` }, 'pod_template_file')).toEqual([
      `${K}.pod_template_file.spec.containers[0].args`,
      'is reserved for Berth',
    ]);
  });
});
