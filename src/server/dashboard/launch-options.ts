/**
 * What the dashboard's launch form offers (pure): the config's agents, the names a launch may
 * give as executor (executor entries usable directly, and profiles) with their type, and the defaults.
 * @module
 */
import { directLaunchProblem, launchTargetNames, resolveProfile, type ResolvedConfig } from '../../config/index.js';
import type { LaunchOptions } from '../../api/schemas.js';

export function launchOptionsOf(config: ResolvedConfig): LaunchOptions {
  const targets: LaunchOptions['targets'] = [];
  for (const name of launchTargetNames(config)) {
    const resolved = resolveProfile(config, name);
    // A Kubernetes executor without a profile has no Pod template: a launch naming it is refused.
    if (!resolved || directLaunchProblem(config, name) !== null) continue;
    targets.push({ name, type: resolved.executor.type, kind: resolved.profile ? 'profile' : 'executor' });
  }
  return { agents: Object.keys(config.agents), targets, defaults: { agent: config.defaults.agent, executor: config.defaults.executor } };
}
