/**
 * The agentctl daemon: wires auth, instances and the control server, and stops them in order.
 * @module
 */
import type { Logger } from 'pino';
import { Auth } from './auth.js';
import type { ResolvedAgentctlConfig } from './config.js';
import { closeServer, createControlServer, listen } from './control-server.js';
import { InstanceManager } from './instances.js';
import { VERSION } from './version.js';

export interface Daemon {
  /** Stops accepting requests, stops every instance (children: SIGTERM, then SIGKILL) and closes. */
  stop(): Promise<void>;
}

export async function startDaemon(config: ResolvedAgentctlConfig, log: Logger): Promise<Daemon> {
  const auth = new Auth(config.bootstrapNonce);
  const instances = new InstanceManager(config, auth, log);
  const control = createControlServer(auth, instances, log);
  await listen(control, config.controlPort);
  log.info(
    { version: VERSION, port: config.controlPort, handshake: config.bootstrapNonce !== null, stateDir: config.stateDir ?? '<workspace>/.agentctl/state' },
    'agentctl listening',
  );
  let stopping: Promise<void> | null = null;
  return {
    stop() {
      stopping ??= (async () => {
        const closed = closeServer(control);
        await instances.stopAll();
        await closed;
      })();
      return stopping;
    },
  };
}
