/**
 * `berth doctor` checks of the agents: each agent's program can be found (on this PATH, like berth
 * serve's local agents), and for an agent that takes credentials, whether a launch on the default
 * target would get some: one of its credential variables approved there and set here, or a login
 * file on this host. A built-in preset that is not installed here is a warning, not a failure: it
 * may well be usable on Kubernetes, where the image carries it.
 * @module
 */
import { accessSync, constants, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, isAbsolute, join } from 'node:path';
import { AGENTCTL_PLACEHOLDER, approvedSecretEnv, resolveProfile, type AgentProfile, type ResolvedConfig } from '../../config/index.js';
import type { Check } from '../types.js';

/** Where `command` is found: itself when it has a `/`, else the first executable file on `path`. */
function findExecutable(command: string, path: string | undefined): string | null {
  const executable = (file: string): boolean => {
    try {
      accessSync(file, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (command.includes('/')) return executable(command) ? command : null;
  for (const dir of (path ?? '').split(delimiter)) {
    if (dir === '' || !isAbsolute(dir)) continue;
    const file = join(dir, command);
    if (executable(file)) return file;
  }
  return null;
}

function commandCheck(config: ResolvedConfig, agent: AgentProfile, path: string | undefined): Check {
  const name = `agent ${agent.name}`;
  const program = agent.command[0] ?? '';
  if (program === AGENTCTL_PLACEHOLDER) return { name, ok: true, detail: 'built into agentctl' };
  const found = findExecutable(program, path);
  if (found !== null) return { name, ok: true, detail: found };
  const missing = `'${program}' is not ${program.includes('/') ? 'an executable file' : 'on PATH'}`;
  // a preset nobody chose is not a fault of this install
  if (agent.builtin === true && config.defaults.agent !== agent.name) {
    return { name, ok: true, warn: true, detail: `${missing} (not usable for local sessions here; on Kubernetes when the image has it)`, fix: `install it to use --agent ${agent.name} locally` };
  }
  return { name, ok: false, detail: missing, fix: `install it, or correct agents.${agent.name}.command in ${config.source ?? 'berth.yaml'}` };
}

function credentialCheck(config: ResolvedConfig, agent: AgentProfile, env: NodeJS.ProcessEnv): Check | null {
  if (agent.secretEnv.length === 0 && agent.loginFiles.length === 0) return null;
  const name = `agent ${agent.name}`;
  const target = resolveProfile(config, config.defaults.executor);
  const approved = new Set(target === null ? [] : approvedSecretEnv(target));
  const usable = agent.secretEnv.filter((n) => approved.has(n) && (env[n] ?? '') !== '');
  if (usable.length > 0) return { name, ok: true, detail: `${usable.join(', ')} (approved for ${config.defaults.executor} and set in this environment; berth serve must have it too)` };
  const home = env.HOME || homedir();
  const login = agent.loginFiles.find((f) => existsSync(f.host.startsWith('~/') ? join(home, f.host.slice(2)) : f.host));
  if (login !== undefined) return { name, ok: true, detail: `the login in ${login.host} (copied into each session's private agent state)` };
  const keys = agent.secretEnv.join(' or ');
  const where = target === null ? 'secret_env of the executor or profile' : target.profile !== null ? `profiles.${target.profile.name}.secret_env` : `executors.${target.executor.name}.secret_env`;
  const signIn = agent.loginFiles.length > 0 ? `, or sign in so ${agent.loginFiles.map((f) => f.host).join(' or ')} exists` : '';
  const detail = `none for launches on ${config.defaults.executor}`;
  const fix = keys === '' ? `sign in so ${agent.loginFiles.map((f) => f.host).join(' or ')} exists` : `set ${keys} for berth serve and list it in ${where}${signIn}`;
  return { name, ok: true, warn: true, detail, fix };
}

/** One check per agent: its program, and its credentials where it takes some (the worse of the two decides). */
export function checkAgents(config: ResolvedConfig | null, env: NodeJS.ProcessEnv): Check[] {
  if (config === null) return [];
  return Object.values(config.agents).map((agent) => {
    const program = commandCheck(config, agent, env.PATH);
    const credentials = credentialCheck(config, agent, env);
    if (credentials === null) return program;
    const fixes = [program.fix, credentials.fix].filter((f): f is string => f !== undefined);
    return {
      name: program.name,
      ok: program.ok,
      detail: `${program.detail}; credentials: ${credentials.detail}`,
      ...(fixes.length > 0 ? { fix: fixes.join('; ') } : {}),
      ...(program.ok && (program.warn === true || credentials.warn === true) ? { warn: true } : {}),
    };
  });
}
