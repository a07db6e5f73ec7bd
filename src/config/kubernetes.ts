/**
 * The berth.yaml side of the Kubernetes executor: turns the schema-checked `executors.<name>` and
 * `profiles.<name>.kubernetes` entries into a connection and a profile. Paths are resolved against
 * the config file and `pod_template_file` is read here (the one I/O); every rule lives in
 * `executors/kubernetes/config` so a recorded snapshot is re-checked by the same code.
 * @module
 */
import { readFileSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { z } from 'zod';
import { MAX_TEMPLATE_BYTES } from '../executors/kubernetes/constants.js';
import { parseKubernetesConnection, parseKubernetesProfile } from '../executors/kubernetes/config/index.js';
import type { KubernetesConnection, KubernetesProfile } from '../executors/kubernetes/types.js';
import { errnoCode } from '../shared/errors.js';
import { ConfigFieldError } from '../shared/config-field-error.js';
import type { KubernetesExecutorSchema, KubernetesProfileSchema } from './schema.js';

interface ResolveContext {
  /** The config file (for messages), null for built-in defaults. */
  source: string | null;
  /** Relative paths are resolved against this directory (the config file's). */
  baseDir: string;
  /** `~/` in a path expands to this. */
  homeDir?: string;
}

/** The connection of `executors.<name>`. */
export function resolveKubernetesConnection(name: string, e: z.infer<typeof KubernetesExecutorSchema>, ctx: ResolveContext): KubernetesConnection {
  const raw = e.kubeconfig_path?.trim();
  return parseKubernetesConnection(
    {
      authMode: e.auth_mode,
      kubeconfigPath: raw === undefined || raw === '' ? null : resolvePath(raw, ctx),
      kubeContext: e.kube_context,
      namespace: e.namespace,
      requestTimeoutSeconds: e.request_timeout_seconds,
    },
    `executors.${name}`,
    ctx.source,
  );
}

/** The profile of `profiles.<name>.kubernetes` (reads `pod_template_file`). */
export function resolveKubernetesProfile(name: string, k: z.infer<typeof KubernetesProfileSchema>, ctx: ResolveContext): KubernetesProfile {
  const path = `profiles.${name}.kubernetes`;
  if (k.pod_template !== undefined && k.pod_template_file !== undefined) {
    throw new ConfigFieldError(`${path}.pod_template_file`, 'cannot be set together with pod_template (choose one)', ctx.source);
  }
  const fromFile = k.pod_template_file !== undefined;
  const templateText = fromFile ? readTemplateFile(resolvePath(k.pod_template_file ?? '', ctx), `${path}.pod_template_file`, ctx.source) : k.pod_template;
  const w = k.workspace;
  const t = k.timeouts;
  return parseKubernetesProfile(
    {
      platform: k.platform,
      mainContainer: k.main_container,
      templateText,
      workspace: w && { mode: w.mode, size: w.size, storageClass: w.storage_class, accessModes: w.access_modes, claimName: w.claim_name },
      setupScript: k.setup_script,
      cleanupScript: k.cleanup_script,
      budgets: t && {
        pvcBindingSeconds: t.pvc_binding_seconds,
        schedulingSeconds: t.scheduling_seconds,
        imagePullSeconds: t.image_pull_seconds,
        containerStartSeconds: t.container_start_seconds,
        uploadSeconds: t.upload_seconds,
        cloneSeconds: t.clone_seconds,
        setupScriptSeconds: t.setup_script_seconds,
      },
    },
    { path, templateField: fromFile ? 'pod_template_file' : 'pod_template', file: ctx.source },
  );
}

function resolvePath(path: string, ctx: ResolveContext): string {
  if (path === '~' || path.startsWith('~/')) return join(ctx.homeDir ?? homedir(), path.slice(1));
  return resolve(ctx.baseDir, path);
}

/** Reads the template file; the size cap is checked before reading so a wrong path cannot load a huge file. */
function readTemplateFile(file: string, field: string, source: string | null): string {
  try {
    if (statSync(file).size > MAX_TEMPLATE_BYTES) throw new ConfigFieldError(field, `must not exceed ${MAX_TEMPLATE_BYTES / 1024} KiB (${file})`, source);
    return readFileSync(file, 'utf8');
  } catch (err) {
    if (err instanceof ConfigFieldError) throw err;
    const code = errnoCode(err);
    throw new ConfigFieldError(field, code === 'ENOENT' ? `file not found (${file})` : `cannot be read (${code ?? 'error'}: ${file})`, source);
  }
}
