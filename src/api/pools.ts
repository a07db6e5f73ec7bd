/**
 * The warm pools on the wire: what `GET /api/v1/pools` lists (each pooled profile with its members)
 * and what `DELETE /api/v1/pools/{profile}` answers.
 * @module
 */
import { z } from 'zod';

const PoolMemberViewSchema = z.object({
  id: z.string(),
  state: z.enum(['creating', 'ready', 'claimed']).meta({ description: '`claimed`: a launch is taking it (for a moment)' }),
  createdAt: z.string(),
  /** The member's Pod (namespace/name), once created. */
  pod: z.string().nullable(),
});
export type PoolMemberView = z.infer<typeof PoolMemberViewSchema>;

const PoolViewSchema = z.object({
  profile: z.string(),
  executor: z.string(),
  /** The configured size (0: being emptied); members of a profile no longer pooled show size 0 too. */
  size: z.number().int().nonnegative(),
  maxAgeMs: z.number().int().nonnegative(),
  repository: z.object({ url: z.string(), branch: z.string().nullable() }).nullable(),
  ready: z.number().int().nonnegative(),
  creating: z.number().int().nonnegative(),
  members: z.array(PoolMemberViewSchema),
});
export type PoolView = z.infer<typeof PoolViewSchema>;

export const PoolListSchema = z.object({ pools: z.array(PoolViewSchema) });

export const PoolRemoveResultSchema = z.object({
  profile: z.string(),
  /** Members deleted (their Pod and PVC, then their row). */
  removed: z.number().int().nonnegative(),
});
export type PoolRemoveResult = z.infer<typeof PoolRemoveResultSchema>;
