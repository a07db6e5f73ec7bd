/**
 * The agentctl daemon: wires auth, instances and the control server, and stops them in order.
 * @module
 */
import { closeSync, writeSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import type { Logger } from 'pino';
import { formatPortReport } from '../protocol/index.js';
import { Auth } from './auth.js';
import type { ResolvedAgentctlConfig } from './config.js';
import { closeAcceptor, closeServer, createControlServer, listen, listenInherited } from './control-server.js';
import { startEgressRelay } from './egress-relay.js';
import { InstanceManager } from './instances.js';
import { VERSION } from './version.js';

interface Daemon {
  /** Stops accepting requests, stops every instance (children: SIGTERM, then SIGKILL) and closes. */
  stop(): Promise<void>;
}

export async function startDaemon(config: ResolvedAgentctlConfig, log: Logger): Promise<Daemon> {
  // reads (and removes) the nonce file before anything listens
  const auth = new Auth(config.bootstrapNonce, config.bootstrapNonceFile);
  const instances = new InstanceManager(config, auth, log);
  const control = createControlServer(auth, instances, log);
  await listen(control, config.controlPort);
  const port = (control.address() as AddressInfo).port;
  // both up before the report: the controller connects through the socket, the agent's proxy is the relay
  const inherited = config.controlFd === null ? null : await listenInherited(control, config.controlFd);
  const relay = config.egressRelay === null ? null : await startEgressRelay(config.egressRelay, log);
  if (config.reportFd !== null) reportPort(config.reportFd, port);
  log.info(
    {
      version: VERSION,
      port,
      controlFd: config.controlFd,
      handshake: config.bootstrapNonce !== null || config.bootstrapNonceFile !== null,
      stateDir: config.stateDir ?? '<workspace>/.agentctl/state',
    },
    'agentctl listening',
  );
  let stopping: Promise<void> | null = null;
  return {
    stop() {
      stopping ??= (async () => {
        const accepting = inherited === null ? Promise.resolve() : closeAcceptor(inherited);
        const closed = closeServer(control);
        await instances.stopAll();
        await Promise.all([closed, accepting, relay?.close()]);
      })();
      return stopping;
    },
  };
}

/**
 * Writes the port report to `fd` and closes it, so no workspace process inherits it. A failure
 * (the fd is not open, the reader is gone) is thrown: the launch that asked cannot connect anyway.
 */
function reportPort(fd: number, controlPort: number): void {
  try {
    const line = Buffer.from(formatPortReport({ controlPort }));
    let written = 0;
    while (written < line.length) written += writeSync(fd, line, written);
  } finally {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
  }
}
