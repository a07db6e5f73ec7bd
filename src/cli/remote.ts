/**
 * Picks the client factory of a command: the local data dir's `berth serve` or a remote
 * controller, by the precedence of remote-config.ts.
 * @module
 */
import type { BerthClient } from '../api/index.js';
import { loadRemoteConfig, remoteConfigPath, resolveTarget } from './remote-config.js';
import type { GlobalFlags } from './types.js';

interface Connector {
  connect: (dataDir: string) => BerthClient | null;
  /** The remote server in use (for error hints), or null for the local data dir. */
  remote: { server: string; context: string | null } | null;
}

export async function connectorFor(globals: GlobalFlags, env: Readonly<Record<string, string | undefined>>): Promise<Connector> {
  const target = resolveTarget({ server: globals.server, dataDir: globals.dataDir }, env, () => loadRemoteConfig(remoteConfigPath(env)));
  if (target.kind === 'local') return { connect: (await import('../server/node-client.js')).clientForDataDir, remote: null };
  const { remoteClient } = await import('./remote-client.js');
  return {
    connect: () => remoteClient(target.server, target.token, target.ca),
    remote: { server: target.server, context: target.context },
  };
}
