/**
 * A local session under a network policy (a profile's `network:` block, issue 23): its sandbox gets
 * no network of its own (`--unshare-net`: a private loopback only), so nothing inside reaches any
 * address directly. Where the settings use Berth's egress proxy (an allow list, a broker), the
 * directory of the proxy's Unix socket is bound read-only into the sandbox (the directory, not the
 * socket file: a bind holds the file it was made of, and a proxy restarted by `berth serve` binds a
 * new one at the same path; connecting needs no write access to the mount) and agentctl relays
 * 127.0.0.1:{@link LOCAL_EGRESS_PORT} to it (the agent's HTTPS_PROXY); without the proxy (`deny`, `open`) the sandbox reaches nothing:
 * a private loopback cannot tell one outside address from another. The controller reaches agentctl
 * through its control socket (control-socket.ts).
 * @module
 */
import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { ENV } from '../../protocol/index.js';
import { errorMessage } from '../../shared/errors.js';
import { LaunchError } from '../launch-kit/index.js';
import { LOCAL_EGRESS_PORT, networkSettingsOf, usesEgressProxy } from '../network.js';
import { STAGE } from './constants.js';
import type { LaunchSandbox, SandboxPlan } from './sandbox.js';

/** Where the egress socket's directory is inside the sandbox: in its private /tmp (the read-only root has no place to mount it). */
export const SANDBOX_EGRESS_DIR = '/tmp/.berth-egress';

/** The private network of one launch. */
interface PrivateNetwork {
  /** The egress proxy's socket on the host (real path), its directory bound into the sandbox; null when the settings need no proxy. */
  egressSocket: string | null;
}

const fail = (reason: string, message: string, cause?: unknown): LaunchError =>
  new LaunchError(STAGE.agentctlStart, reason, `agentctl_start: ${message}`, cause === undefined ? undefined : { cause });

/**
 * The private network a launch with the profile snapshot's `settings` gets: null without a network
 * policy (the sandbox keeps the executor's network setting). Throws a LaunchError of the
 * `agentctl_start` stage when the policy cannot be kept: no sandbox, or the proxy's socket missing.
 */
export function privateNetworkFor(settings: Readonly<Record<string, string>>, sandbox: LaunchSandbox, egressSocket: string | null): PrivateNetwork | null {
  let network;
  try {
    network = networkSettingsOf(settings);
  } catch (err) {
    throw fail('InvalidNetworkSettings', errorMessage(err), err);
  }
  if (network === null) return null;
  if (sandbox.kind === 'none') {
    throw fail(
      'SandboxRequired',
      'the profile has a network policy, which needs the bubblewrap sandbox (without it the agent shares the host network); ' +
        `the executor runs agents without one${sandbox.warning === null ? ' (sandbox: none)' : ' here'}: set sandbox: bubblewrap on a machine where bubblewrap works`,
    );
  }
  if (!usesEgressProxy(network)) return { egressSocket: null };
  const notRunning = 'the egress proxy of berth serve is not running';
  if (egressSocket === null) throw fail('EgressProxyUnavailable', `${notRunning} (this executor has no egress socket)`);
  let real: string;
  try {
    real = realpathSync(egressSocket);
    if (!lstatSync(real).isSocket()) throw new Error('not a socket');
  } catch (err) {
    throw fail('EgressProxyUnavailable', `${notRunning} (no socket at ${egressSocket})`, err);
  }
  return { egressSocket: real };
}

/** `plan` without a network: `--unshare-net`, and the egress socket's directory (if any) bound read-only at {@link SANDBOX_EGRESS_DIR}. */
export function privateNetworkPlan(plan: SandboxPlan, net: PrivateNetwork): SandboxPlan {
  if (net.egressSocket === null) return { ...plan, network: false };
  return { ...plan, network: false, readOnlyAt: [...plan.readOnlyAt, { source: dirname(net.egressSocket), dest: SANDBOX_EGRESS_DIR }] };
}

/** agentctl's environment for `net`: its egress relay from the sandbox's loopback to the socket in the bound directory. */
export function privateNetworkEnv(net: PrivateNetwork): Record<string, string> {
  if (net.egressSocket === null) return {};
  return { [ENV.egressRelay]: `127.0.0.1:${LOCAL_EGRESS_PORT}=${SANDBOX_EGRESS_DIR}/${basename(net.egressSocket)}` };
}
