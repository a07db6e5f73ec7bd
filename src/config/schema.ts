/**
 * The shape of `berth.yaml` (raw, as written by users). Unknown keys are rejected everywhere.
 * @module
 */
import { IdleSchema } from './idle.js';
import { PoolSchema } from './pool.js';
import { z } from 'zod';
import { ENV_NAME } from '../shared/env-name.js';
import { StoreSchema } from './store.js';
import { EgressProxyEndpointSchema, EgressServeSchema, NetworkSchema } from './network.js';

const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;

const nameKey = z.string().regex(NAME, { error: 'must be a name of lowercase letters, digits, "-" or "_"' });
const envMap = z.record(
  z.string().regex(ENV_NAME, { error: 'must be a valid environment variable name' }),
  z.string({ error: 'must be a string (quote numbers and booleans)' }),
  { error: 'must be a map of NAME: value' },
);
/**
 * `secret_env`: the names of `berth serve`'s environment variables a launch may pass to its agent
 * (`secretEnv` / `--secret-env`); a launch naming any other is refused.
 */
const secretEnvList = z.array(z.string({ error: 'must be an environment variable name' }).regex(ENV_NAME, { error: 'must be an environment variable name' }), {
  error: 'must be a list of environment variable names',
});

const LocalExecutorSchema = z.strictObject({
  type: z.literal('local'),
  /** Path of the agentctl bundle (`dist/agentctl.cjs`); relative paths are relative to the config file. */
  agentctl_path: z.string().min(1, { error: 'must be a non-empty path' }).optional(),
  /** `bubblewrap` (the default where it works) confines each agentctl and its agent; `none` opts out. */
  sandbox: z.enum(['bubblewrap', 'none'], { error: 'must be "bubblewrap" or "none"' }).optional(),
  /** Whether sandboxed agents share the host network (default true); false leaves them loopback only. */
  network: z.boolean({ error: 'must be true or false' }).optional(),
  /** Paths sandboxed agents must not see, besides the defaults; absolute or `~/…` (checked in config.ts). */
  sandbox_hide: z.array(z.string({ error: 'must be a path' }), { error: 'must be a list of paths' }).optional(),
  /** Paths sandboxed agents may read (e.g. `~/.gitconfig`); absolute or `~/…` (checked in config.ts). */
  sandbox_expose: z.array(z.string({ error: 'must be a path' }), { error: 'must be a list of paths' }).optional(),
  secret_env: secretEnvList.optional(),
  /** Suspend its sessions' idle agents (idle.ts); a profile's `idle` wins. */
  idle: IdleSchema.optional(),
  description: z.string().optional(),
});

/** A cluster connection (spec §2.1); values are checked by `executors/kubernetes/config/connection.ts`. */
export const KubernetesExecutorSchema = z.strictObject({
  type: z.literal('kubernetes'),
  auth_mode: z.enum(['kubeconfig', 'in_cluster'], { error: 'must be "kubeconfig" or "in_cluster"' }).optional(),
  /** Default: `$KUBECONFIG`, else `~/.kube/config`. Relative paths are relative to the config file. */
  kubeconfig_path: z.string().optional(),
  kube_context: z.string().optional(),
  namespace: z.string().min(1, { error: 'must be a valid Kubernetes namespace' }).optional(),
  request_timeout_seconds: z.number().int().min(1).max(300, { error: 'must be between 1 and 300' }).optional(),
  /** Where this cluster's Pods reach Berth's egress proxy (network.ts). */
  egress_proxy: EgressProxyEndpointSchema.optional(),
  secret_env: secretEnvList.optional(),
  idle: IdleSchema.optional(),
  description: z.string().optional(),
});

const ExecutorSchema = z.discriminatedUnion('type', [LocalExecutorSchema, KubernetesExecutorSchema], {
  error: 'must have type "local" or "kubernetes"',
});

const budgetSeconds = z.number({ error: 'must be a number of seconds' });

/**
 * `profiles.<name>.kubernetes`: shapes and types only; the values (platform, names, quantities, the
 * template, workspace mode rules, bounds) are checked by `executors/kubernetes/config`, which also
 * re-checks a recorded snapshot.
 */
export const KubernetesProfileSchema = z.strictObject({
  platform: z.string({ error: 'must be linux/amd64 or linux/arm64' }).optional(),
  main_container: z.string({ error: 'must be a valid container name' }).optional(),
  /** One Pod, PodTemplate or {metadata, spec} YAML document, as a string (`pod_template: |`). */
  pod_template: z.string({ error: 'must be a string (write the template as a YAML block: pod_template: |)' }).optional(),
  /** A file holding the template; relative paths are relative to the config file. */
  pod_template_file: z.string({ error: 'must be a path' }).min(1, { error: 'must be a non-empty path' }).optional(),
  workspace: z
    .strictObject({
      mode: z.string({ error: 'must be managed_pvc, empty_dir, or existing_claim' }).optional(),
      size: z.string({ error: 'must be a Kubernetes quantity such as 10Gi' }).optional(),
      storage_class: z.string({ error: 'must be a valid storage class name' }).optional(),
      access_modes: z.array(z.string({ error: 'must be an access mode' }), { error: 'must be a list of access modes' }).optional(),
      claim_name: z.string({ error: 'must be a valid claim name' }).optional(),
    })
    .optional(),
  setup_script: z.string({ error: 'must be a string (a shell script)' }).optional(),
  cleanup_script: z.string({ error: 'must be a string (a shell script)' }).optional(),
  timeouts: z
    .strictObject({
      pvc_binding_seconds: budgetSeconds.optional(),
      scheduling_seconds: budgetSeconds.optional(),
      image_pull_seconds: budgetSeconds.optional(),
      container_start_seconds: budgetSeconds.optional(),
      upload_seconds: budgetSeconds.optional(),
      clone_seconds: budgetSeconds.optional(),
      setup_script_seconds: budgetSeconds.optional(),
    })
    .optional(),
});

const ProfileSchema = z.strictObject({
  /** Name of an entry of `executors`. */
  executor: nameKey,
  env: envMap.optional(),
  /** Required for (and only allowed on) a profile of a kubernetes executor. */
  kubernetes: KubernetesProfileSchema.optional(),
  /** Added to its executor's `secret_env` for launches of this profile. */
  secret_env: secretEnvList.optional(),
  /** Suspend its sessions' idle agents (idle.ts), instead of its executor's setting. */
  idle: IdleSchema.optional(),
  /** A warm pool of ready Pods for its launches (pool.ts); kubernetes executors only. */
  pool: PoolSchema.optional(),
  /** What its sessions' agents may reach, and the model APIs brokered for them (network.ts). */
  network: NetworkSchema.optional(),
  description: z.string().optional(),
});

const AgentSchema = z.strictObject({
  /** Required unless the name is a built-in agent's (then every field overrides the preset's). */
  command: z
    .array(z.string().min(1, { error: 'must be a non-empty array of strings' }), { error: 'must be a non-empty array of strings' })
    .min(1, { error: 'must be a non-empty array of strings' })
    .optional(),
  /** Over a preset's env key by key. `{{agent_state}}` stands for the agent's per-session state directory. */
  env: envMap.optional(),
  /** How the agent gets the launch prompt besides BERTH_PROMPT: in argv (`{{prompt}}`), on stdin, or in a file (`{{prompt_file}}`). */
  prompt: z.enum(['argv', 'stdin', 'file'], { error: 'must be argv, stdin or file' }).optional(),
  /** How agentctl talks to the agent: `raw` pipes its stdio (default), `acp` speaks the Agent Client Protocol (the prompt is its first turn). */
  protocol: z.enum(['raw', 'acp'], { error: 'must be raw or acp' }).optional(),
  /** ACP only: who answers the agent's permission requests (default ask: a person, with berth approve). */
  approve: z.enum(['ask', 'auto-edits', 'auto-all'], { error: 'must be ask, auto-edits or auto-all' }).optional(),
  /** ACP only: the agent's session mode to set once its session is open (the agent's own mode id). */
  mode: z.string().min(1, { error: 'must be a non-empty mode id' }).optional(),
  /**
   * The environment variables the agent takes its credentials from: each one the launch target
   * approves (`secret_env`) and `berth serve` has is passed to it, never recorded.
   */
  credential_env: secretEnvList.optional(),
  /** Files written into the agent's state directory unless there already (its own config): path relative to it, and text. */
  state_files: z
    .array(z.strictObject({ path: z.string().min(1, { error: 'must be a relative path' }), content: z.string({ error: 'must be text' }) }), {
      error: 'must be a list of {path, content}',
    })
    .optional(),
  /** Files of a subscription login on the controller's host (`~/…`), copied once per session into the agent's state. */
  login_files: z
    .array(z.strictObject({ host: z.string().min(1, { error: 'must be a path' }), state: z.string().min(1, { error: 'must be a relative path' }) }), {
      error: 'must be a list of {host, state} paths',
    })
    .optional(),
  description: z.string().optional(),
});

const DefaultsSchema = z.strictObject({
  executor: nameKey.optional(),
  agent: nameKey.optional(),
});

export const ConfigFileSchema = z.strictObject({
  defaults: DefaultsSchema.optional(),
  executors: z.record(nameKey, ExecutorSchema).optional(),
  profiles: z.record(nameKey, ProfileSchema).optional(),
  agents: z.record(nameKey, AgentSchema).optional(),
  /** Where the inventory lives (store.ts). */
  store: StoreSchema.optional(),
  /** The egress proxy `berth serve` runs (network.ts). */
  egress: EgressServeSchema.optional(),
});
