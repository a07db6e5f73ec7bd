/**
 * The shape of `berth.yaml` (raw, as written by users). Unknown keys are rejected everywhere.
 * @module
 */
import { z } from 'zod';

const NAME = /^[a-z0-9][a-z0-9_-]{0,62}$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

const nameKey = z.string().regex(NAME, { error: 'must be a name of lowercase letters, digits, "-" or "_"' });
const envMap = z.record(
  z.string().regex(ENV_NAME, { error: 'must be a valid environment variable name' }),
  z.string({ error: 'must be a string (quote numbers and booleans)' }),
  { error: 'must be a map of NAME: value' },
);

export const LocalExecutorSchema = z.strictObject({
  type: z.literal('local'),
  /** Path of the agentctl bundle (`dist/agentctl.cjs`); relative paths are relative to the config file. */
  agentctl_path: z.string().min(1, { error: 'must be a non-empty path' }).optional(),
  description: z.string().optional(),
});

/** Accepted by the schema so configs can be written ahead; the executor itself is not implemented yet. */
export const KubernetesExecutorSchema = z.strictObject({
  type: z.literal('kubernetes'),
  auth_mode: z.enum(['kubeconfig', 'in_cluster'], { error: 'must be "kubeconfig" or "in_cluster"' }).optional(),
  kubeconfig_path: z.string().optional(),
  kube_context: z.string().optional(),
  namespace: z.string().min(1, { error: 'must be a non-empty namespace' }).optional(),
  request_timeout_seconds: z.number().int().min(1).max(300, { error: 'must be between 1 and 300' }).optional(),
  description: z.string().optional(),
});

export const ExecutorSchema = z.discriminatedUnion('type', [LocalExecutorSchema, KubernetesExecutorSchema], {
  error: 'must have type "local" or "kubernetes"',
});

export const ProfileSchema = z.strictObject({
  /** Name of an entry of `executors`. */
  executor: nameKey,
  env: envMap.optional(),
  description: z.string().optional(),
});

export const AgentSchema = z.strictObject({
  command: z
    .array(z.string().min(1, { error: 'must be a non-empty array of strings' }), { error: 'must be a non-empty array of strings' })
    .min(1, { error: 'must be a non-empty array of strings' }),
  env: envMap.optional(),
  description: z.string().optional(),
});

export const DefaultsSchema = z.strictObject({
  executor: nameKey.optional(),
  agent: nameKey.optional(),
});

export const ConfigFileSchema = z.strictObject({
  defaults: DefaultsSchema.optional(),
  executors: z.record(nameKey, ExecutorSchema).optional(),
  profiles: z.record(nameKey, ProfileSchema).optional(),
  agents: z.record(nameKey, AgentSchema).optional(),
});

export type RawConfigFile = z.infer<typeof ConfigFileSchema>;
