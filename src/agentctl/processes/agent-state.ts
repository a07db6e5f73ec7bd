/**
 * An agent's own state directory (`agent_state` of a process start): `<instance state>/agents/<name>`,
 * 0700, beside the instance's process records, so it lives as long as they do (the session's
 * private state locally, the workspace volume on Kubernetes). `{{agent_state}}` in the argv and the
 * env values becomes its path.
 * @module
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AGENT_STATE_PLACEHOLDER } from '../../protocol/index.js';

/** Creates (if needed) the state directory `name` of the instance at `stateRoot`; returns its path. */
export function agentStateDir(stateRoot: string, name: string): string {
  const dir = join(stateRoot, 'agents', name);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/** `command` and `env` with `{{agent_state}}` replaced by `dir`. */
export function expandAgentState(command: readonly string[], env: Readonly<Record<string, string>>, dir: string): { command: string[]; env: Record<string, string> } {
  const expand = (v: string): string => v.split(AGENT_STATE_PLACEHOLDER).join(dir);
  return { command: command.map(expand), env: Object.fromEntries(Object.entries(env).map(([k, v]) => [k, expand(v)])) };
}

/**
 * Writes each of `files` into state directory `dir` (0600, parents 0700) unless it exists there:
 * the agent owns its copy afterwards (a login it refreshed is never overwritten by the original).
 * Returns the paths written.
 */
export function seedAgentFiles(dir: string, files: readonly { path: string; data_base64: string }[]): string[] {
  const written: string[] = [];
  for (const f of files) {
    const target = join(dir, f.path);
    mkdirSync(dirname(target), { recursive: true, mode: 0o700 });
    try {
      writeFileSync(target, Buffer.from(f.data_base64, 'base64'), { mode: 0o600, flag: 'wx' });
      written.push(f.path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return written;
}
