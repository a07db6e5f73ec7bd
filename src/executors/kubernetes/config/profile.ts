/**
 * The `profiles.<name>.kubernetes` block (spec §2.2 + §3.1): platform, main container, the Pod
 * template (strict, reserved fields), the workspace and the wait budgets, validated in that order
 * with every default from `defaults.ts`. Pure: the template text is handed in already read.
 * @module
 */
import type { KubernetesProfile, Platform, WaitBudgets } from '../types.js';
import { BUDGET_DEFAULTS, BUDGET_MAX_SECONDS, BUDGET_MIN_SECONDS, PROFILE_DEFAULTS } from './defaults.js';
import { ConfigFieldError } from '../../../shared/config-field-error.js';
import { isDns1123Label } from './identifiers.js';
import { field } from './paths.js';
import { checkReservedFields } from './reserved.js';
import { parsePodTemplate } from './template.js';
import { parseWorkspace, type WorkspaceInput } from './workspace.js';

const PLATFORMS: readonly Platform[] = ['linux/amd64', 'linux/arm64'];

/** `timeouts:` keys as written in berth.yaml, per budget. */
const BUDGET_KEYS: Readonly<Record<keyof WaitBudgets, string>> = {
  pvcBindingSeconds: 'pvc_binding_seconds',
  schedulingSeconds: 'scheduling_seconds',
  imagePullSeconds: 'image_pull_seconds',
  containerStartSeconds: 'container_start_seconds',
  uploadSeconds: 'upload_seconds',
  cloneSeconds: 'clone_seconds',
  setupScriptSeconds: 'setup_script_seconds',
};

export interface KubernetesProfileInput {
  platform?: string | undefined;
  mainContainer?: string | undefined;
  /** The template text (inline, or the content of `pod_template_file`); undefined when neither is set. */
  templateText?: string | undefined;
  workspace?: WorkspaceInput | undefined;
  setupScript?: string | undefined;
  cleanupScript?: string | undefined;
  budgets?: Partial<Record<keyof WaitBudgets, number | undefined>> | undefined;
}

interface ProfileLocation {
  /** The block's path, `profiles.k8s.kubernetes`. */
  path: string;
  /** Which key the template text came from; its errors are named under it. @default 'pod_template' */
  templateField?: 'pod_template' | 'pod_template_file';
  /** The config file, for error messages. */
  file?: string | null;
}

/** Validates the block and returns the profile every later Pod of a session is built from. */
export function parseKubernetesProfile(input: KubernetesProfileInput, at: ProfileLocation): KubernetesProfile {
  const { path } = at;
  const file = at.file ?? null;
  const fail = (key: string, detail: string) => new ConfigFieldError(field(path, key), detail, file);

  const platform = input.platform ?? PROFILE_DEFAULTS.platform;
  if (!(PLATFORMS as readonly string[]).includes(platform)) throw fail('platform', 'must be linux/amd64 or linux/arm64');
  const mainContainer = input.mainContainer ?? PROFILE_DEFAULTS.mainContainer;
  if (!isDns1123Label(mainContainer)) throw fail('main_container', 'must be a valid container name');

  const templatePath = field(path, at.templateField ?? 'pod_template');
  if (input.templateText === undefined) throw fail('pod_template', 'is required (or pod_template_file)');
  const { template, root } = parsePodTemplate(input.templateText, templatePath, file);
  checkReservedFields(template, root, mainContainer, file);

  const workspace = parseWorkspace(input.workspace, field(path, 'workspace'), file);

  const budgets = { ...BUDGET_DEFAULTS };
  for (const key of Object.keys(BUDGET_KEYS) as (keyof WaitBudgets)[]) {
    const value = input.budgets?.[key];
    if (value === undefined) continue;
    if (!Number.isInteger(value) || value < BUDGET_MIN_SECONDS || value > BUDGET_MAX_SECONDS) {
      throw new ConfigFieldError(field(field(path, 'timeouts'), BUDGET_KEYS[key]), `must be an integer between ${BUDGET_MIN_SECONDS} and ${BUDGET_MAX_SECONDS}`, file);
    }
    budgets[key] = value;
  }

  return {
    platform: platform as Platform,
    mainContainer,
    template,
    templateText: input.templateText,
    workspace,
    setupScript: input.setupScript ?? PROFILE_DEFAULTS.setupScript,
    cleanupScript: input.cleanupScript ?? PROFILE_DEFAULTS.cleanupScript,
    budgets,
  };
}
