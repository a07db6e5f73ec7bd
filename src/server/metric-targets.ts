/**
 * The launch targets the metrics label (pure): each name a launch may give as its executor, with
 * the executor entry and profile it stands for. From the config when `berth serve` passes it
 * (`metricTargetsOf`), else from the launch options (each target then labels as itself).
 * @module
 */
import { launchTargetNames, resolveProfile, type ResolvedConfig } from '../config/index.js';
import type { LaunchOptions } from '../api/index.js';
import type { MetricTarget } from './metrics.js';

/** Every executor entry and profile of `config`, as the metrics label it. */
export function metricTargetsOf(config: ResolvedConfig): MetricTarget[] {
  const out: MetricTarget[] = [];
  for (const name of launchTargetNames(config)) {
    const resolved = resolveProfile(config, name);
    if (!resolved) continue;
    const executor = resolved.profile ? resolved.profile.executor : name;
    out.push({ name, executor, profile: resolved.profile ? name : '', type: resolved.executor.type });
  }
  return out;
}

/** The targets as far as the launch options tell them (a profile's executor entry is not among them: it labels as itself). */
export function metricTargetsFromLaunchOptions(options: LaunchOptions | undefined): MetricTarget[] {
  return (options?.targets ?? []).map((t) => ({ name: t.name, executor: t.name, profile: '', type: t.type }));
}
