/**
 * `idle:` on an executor or a profile: a session whose agent stayed idle for `suspend_after` is
 * suspended (its Pod deleted and its volume kept; locally its agentctl stopped) and wakes on the next
 * real action. Idle is what agentctl reports (no turn, no process the agent started, no shell, no
 * input or output for the window), never API silence.
 * @module
 */
import { z } from 'zod';
import { ConfigFieldError } from '../shared/config-field-error.js';

export const IdleSchema = z.strictObject({
  /** A duration: `90s`, `30m`, `2h`, `1h30m`. */
  suspend_after: z.string({ error: 'must be a duration such as 30m, 2h or 90s' }),
});

/** The resolved `idle:` block. */
export interface IdlePolicy {
  suspendAfterMs: number;
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
/** Shorter than this is a misconfiguration (agentctl's window has a floor too); tests use seconds. */
const MIN_MS = 1000;
/** agentctl's longest activity window. */
const MAX_MS = 86_400_000;

/** `90s`, `30m`, `1h30m`, `500ms` → milliseconds; null when it is not a duration. */
export function parseDuration(text: string): number | null {
  const trimmed = text.trim();
  if (!/^(\d+(ms|s|m|h|d))+$/.test(trimmed)) return null;
  let total = 0;
  for (const [, n, unit] of trimmed.matchAll(/(\d+)(ms|s|m|h|d)/g)) total += Number(n) * (UNIT_MS[unit!] ?? NaN);
  return Number.isSafeInteger(total) ? total : null;
}

/** `raw` (the `idle:` block at `field`) resolved; throws ConfigFieldError naming `<field>.suspend_after`. */
export function resolveIdle(raw: z.infer<typeof IdleSchema> | undefined, field: string, source: string | null): IdlePolicy | undefined {
  if (raw === undefined) return undefined;
  const ms = parseDuration(raw.suspend_after);
  if (ms === null) throw new ConfigFieldError(`${field}.suspend_after`, 'must be a duration such as 30m, 2h or 90s', source);
  if (ms < MIN_MS || ms > MAX_MS) throw new ConfigFieldError(`${field}.suspend_after`, 'must be between 1s and 24h', source);
  return { suspendAfterMs: ms };
}
