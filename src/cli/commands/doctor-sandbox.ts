/**
 * `berth doctor`'s check of what a local agent can read: for each local executor, a probe runs in
 * the sandbox a launch would build and reports every credential-like path it could read (expected:
 * none).
 * @module
 */
import type { ResolvedConfig } from '../../config/index.js';
import { createLocalExecutors } from '../../controller/executor-factory.js';
import { silentLogger } from '../../shared/logger.js';
import type { Check } from '../types.js';

const PRIVATE_HOME = '<private home>';

const isInside = (path: string, dir: string): boolean => path === dir || path.startsWith(`${dir}/`);

/** `<private home>/.aws/x` is what exposing `/home/u/.aws` shows through $HOME. */
const isMirrorOf = (path: string, exposed: string): boolean => {
  if (!path.startsWith(`${PRIVATE_HOME}/`)) return false;
  const rel = path.slice(PRIVATE_HOME.length);
  return exposed.endsWith(rel) || rel.startsWith(`${exposed.slice(exposed.lastIndexOf('/'))}/`);
};

/** One check per local executor: the credential-like paths its agents could read. */
export function checkAgentReads(config: ResolvedConfig | null, opts: { dataDir: string; env: Readonly<Record<string, string | undefined>> }): Check[] {
  if (config === null) return [];
  const exposed = new Map(Object.values(config.executors).map((e) => [e.name, e.type === 'local' ? e.sandboxExpose : []]));
  return createLocalExecutors(config, { dataDir: opts.dataDir, logger: silentLogger, env: opts.env }).map((executor): Check => {
    const name = `agent reads (${executor.name})`;
    let result;
    try {
      result = executor.readableCredentials();
    } catch (err) {
      return { name, ok: false, detail: `cannot probe: ${(err as Error).message}`, fix: 'see the sandbox check above' };
    }
    const { sandboxed, readable } = result;
    if (readable.length === 0) {
      return { name, ok: true, detail: sandboxed ? 'no credential-like path is readable inside its sandbox' : 'no credential-like path found (agents run unconfined)' };
    }
    const list = readable.join(', ');
    if (!sandboxed) {
      return { name, ok: true, warn: true, detail: `agents run unconfined (no sandbox) and can read: ${list}` };
    }
    // what the user exposed on purpose is a finding, not a failure
    const chosen = exposed.get(executor.name) ?? [];
    const unchosen = readable.filter((p) => !chosen.some((e) => isInside(p, e) || isMirrorOf(p, e)));
    if (unchosen.length === 0) return { name, ok: true, warn: true, detail: `its agents can read what sandbox_expose shows: ${list}` };
    return {
      name,
      ok: false,
      detail: `its agents can read: ${unchosen.join(', ')}`,
      fix: `hide them with executors.${executor.name}.sandbox_hide in ${config.source ?? 'berth.yaml'}, or take them out of sandbox_expose`,
    };
  });
}
