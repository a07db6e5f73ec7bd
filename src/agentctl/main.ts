/**
 * agentctl entry point: flags, environment, logging, signal handling. The only place that exits.
 * @module
 */
import { ENV } from '../protocol/index.js';
import { parseAgentctlConfig } from './config.js';
import { startDaemon } from './daemon.js';
import { runDemoAgent } from './demo-agent.js';
import { runDemoAcpAgent } from './demo-acp-agent.js';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { createLogger } from './logger.js';
import { VERSION } from './version.js';

const HELP = `agentctl ${VERSION}: the in-workspace daemon of Berth.

Usage: agentctl [--version | --help]
       agentctl demo-agent     run Berth's scripted demo agent in the current directory
       agentctl demo-acp-agent the same speaking the Agent Client Protocol on stdio

Environment:
  ${ENV.controlPort}            control port on 127.0.0.1, 0 for any free port (default 8765)
  ${ENV.instancePorts}  instance ports: ranges and ports, e.g. 41001-41100,42000, or 0 for any
                             free port per instance (default 41001-41100)
  ${ENV.reportFd}      inherited fd to write {"control_port":N} to once listening (default: none)
  ${ENV.bootstrapNonce} one-shot nonce (16+ random characters) traded for the API token
                             (handshake disabled if unset)
  ${ENV.bootstrapNonceFile} a file holding that nonce instead: read and removed at
                             start (and at a handshake, when a new one was written since)
  ${ENV.stateDir}       state root (default <workspace>/.agentctl/state/<instance id>)
  ${ENV.logLevel}       fatal|error|warn|info|debug|trace|silent (default info)
  ${ENV.maxProcesses}   running processes per instance (default 32)
  ${ENV.maxOutputBytes} retained output per process in bytes (default 8388608)
  ${ENV.stopGraceMs}    SIGTERM to SIGKILL grace when stopping processes (default 5000)
  ${ENV.controlFd}      inherited fd of a listening Unix socket to serve the control API on too
  ${ENV.egressRelay}    127.0.0.1:PORT=/path.sock: relay that loopback port to a Unix socket
  ${ENV.passEnv}        comma-separated names of this environment's variables that workspace
                             processes inherit besides PATH, HOME, USER, LOGNAME, SHELL, LANG,
                             LANGUAGE, LC_*, TERM, COLORTERM, TZ, TMPDIR (default: none)
`;

async function main(argv: readonly string[]): Promise<void> {
  if (argv.includes('--version') || argv.includes('-v')) {
    process.stdout.write(`${VERSION}\n`);
    return;
  }
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(HELP);
    return;
  }
  if (argv[0] === 'demo-agent') {
    await runDemoAgent();
    return;
  }
  if (argv[0] === 'demo-acp-agent') {
    await runDemoAcpAgent();
    return;
  }
  if (argv.length > 0) {
    process.stderr.write(`agentctl: unknown argument ${argv[0]}\n\n${HELP}`);
    process.exit(2);
  }

  let config;
  try {
    config = parseAgentctlConfig(process.env);
  } catch (err) {
    if (err instanceof ConfigFieldError) {
      process.stderr.write(`agentctl: invalid configuration: ${err.message}\n`);
      process.exit(2);
    }
    throw err;
  }

  const log = createLogger(config.logLevel);
  process.on('unhandledRejection', (err) => log.error({ err }, 'unhandled rejection'));
  const daemon = await startDaemon(config, log).catch((err: unknown) => {
    log.fatal({ err }, 'cannot start agentctl');
    process.exit(1);
  });

  const shutdown = (signal: NodeJS.Signals): void => {
    log.info({ signal }, 'stopping');
    daemon.stop().then(
      () => {
        log.info('stopped');
        process.exit(0);
      },
      (err: unknown) => {
        log.error({ err }, 'stop failed');
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
}

main(process.argv.slice(2)).catch((err: unknown) => {
  process.stderr.write(`agentctl: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
