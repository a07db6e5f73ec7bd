/**
 * The control API of agentctl (`127.0.0.1:$AGENTCTL_PORT`): health, the nonce handshake and instances.
 * @module
 */
import { z } from 'zod';

export const HealthResponseSchema = z.object({
  status: z.literal('ok'),
  version: z.string(),
  /** What this agentctl can do beyond the base protocol ({@link AGENTCTL_FEATURES}); absent from older builds. */
  features: z.array(z.string()).optional(),
});

/**
 * Capabilities an agentctl announces in its control `/health`, so a newer controller can tell what a
 * running (possibly older) agentctl serves.
 */
export const AGENTCTL_FEATURES = {
  /**
   * The control server also serves every instance's API (requests and WebSocket upgrades), chosen by
   * the X-Instance-ID header: a client behind one port-forward reaches both without a second forward.
   */
  instanceApiOnControl: 'instance-api-on-control',
} as const;
export type HealthResponse = z.infer<typeof HealthResponseSchema>;

export const HandshakeRequestSchema = z.strictObject({
  nonce: z.string().min(1).max(512),
});

export const HandshakeResponseSchema = z.object({
  token: z.string().min(32),
});

/** Instance ids are path- and header-safe. */
export const InstanceIdSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'must be letters, digits, ".", "_" or "-"');

export const EnvSchema = z.record(
  z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be a valid environment variable name'),
  z.string(),
);

export const CreateInstanceRequestSchema = z.strictObject({
  id: InstanceIdSchema,
  /** Absolute path of the workspace directory (must exist). */
  workspace_path: z.string().min(1),
  /** Environment every process of the instance starts with (on top of agentctl's own). */
  env: EnvSchema.default({}),
  /** Free-form labels echoed back (task id, session id ...). */
  labels: z.record(z.string(), z.string()).default({}),
});
export type CreateInstanceRequest = z.input<typeof CreateInstanceRequestSchema>;

const InstanceStatusSchema = z.enum(['running', 'stopping']);

export const InstanceInfoSchema = z.object({
  id: z.string(),
  port: z.number().int(),
  workspace_path: z.string(),
  status: InstanceStatusSchema,
  created_at: z.string(),
  labels: z.record(z.string(), z.string()),
});
export type InstanceInfo = z.infer<typeof InstanceInfoSchema>;

export const InstanceListSchema = z.object({ instances: z.array(InstanceInfoSchema) });
