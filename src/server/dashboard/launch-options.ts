/**
 * What the dashboard's launch form offers (pure): the config's agents, the names a launch may
 * give as executor (executor entries usable directly, and profiles) with their type and what their
 * executor can do, and the defaults.
 * @module
 */
import { directLaunchProblem, launchTargetNames, resolveProfile, type ResolvedConfig } from '../../config/index.js';
import type { LaunchOptions } from '../../api/index.js';
import { executorCapabilities } from '../../controller/index.js';

export function launchOptionsOf(config: ResolvedConfig): LaunchOptions {
  const targets: LaunchOptions['targets'] = [];
  for (const name of launchTargetNames(config)) {
    const resolved = resolveProfile(config, name);
    // A Kubernetes executor without a profile has no Pod template: a launch naming it is refused.
    if (!resolved || directLaunchProblem(config, name) !== null) continue;
    const { repositoryOptional, removes } = executorCapabilities(resolved.executor);
    targets.push({ name, type: resolved.executor.type, kind: resolved.profile ? 'profile' : 'executor', capabilities: { repositoryOptional, removes } });
  }
  return { agents: Object.keys(config.agents), targets, defaults: { agent: config.defaults.agent, executor: config.defaults.executor } };
}
