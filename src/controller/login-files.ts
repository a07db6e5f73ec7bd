/**
 * The login files of a session's agent (a subscription sign-in such as Claude's
 * `~/.claude/.credentials.json`), read from the controller's host at each agent start and handed
 * to agentctl, which writes them into the agent's per-session state only where it has no copy yet.
 * Their content travels in the authenticated start request and nowhere else: never in the
 * inventory, a Pod spec or a log. A missing file is skipped (the agent then says it needs a login).
 * @module
 */
import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

/** Largest login file sent (agentctl takes up to 1 MiB per file). */
const MAX_LOGIN_FILE_BYTES = 512 * 1024;

export interface AgentFile {
  path: string;
  data_base64: string;
}

/** `~/x` against `home`; absolute paths as they are. */
function hostPath(path: string, home: string): string {
  return path.startsWith('~/') ? join(home, path.slice(2)) : path;
}

/** The login files that exist (and are small enough) as agentctl's `agent_files`, and the host paths skipped. */
export function readLoginFiles(files: readonly { host: string; state: string }[], home = process.env.HOME || homedir()): { files: AgentFile[]; skipped: string[] } {
  const out: AgentFile[] = [];
  const skipped: string[] = [];
  for (const f of files) {
    try {
      const data = readFileSync(hostPath(f.host, home));
      if (data.length > MAX_LOGIN_FILE_BYTES) skipped.push(f.host);
      else out.push({ path: f.state, data_base64: data.toString('base64') });
    } catch {
      skipped.push(f.host);
    }
  }
  return { files: out, skipped };
}
