/**
 * A fresh bootstrap nonce for an agentctl that restarted in its Pod (a container restart): it
 * removed its nonce file the first time, so the nonce is written into the Pod's memory-backed
 * volume again (mode 0600, renamed into place), for its next handshake to read and remove.
 * @module
 */
import { LaunchError } from '../../launch-kit/index.js';
import { PATH, STAGE } from '../constants.js';
import { createNonce, nonceFileContent, shQuote } from '../compose/index.js';
import type { KubeLaunchState } from './context.js';

/** Writes a new nonce to the Pod's nonce file and returns it. */
export async function deliverFreshNonce(l: KubeLaunchState, pod: string): Promise<string> {
  const nonce = createNonce(l.env.random);
  const tmp = `${PATH.nonceFile}.new`;
  const script = `set -eu; umask 077; rm -f ${shQuote(tmp)}; cat >${shQuote(tmp)}; mv -f ${shQuote(tmp)} ${shQuote(PATH.nonceFile)}`;
  const res = await l.kube.exec.exec({
    namespace: l.namespace,
    pod,
    container: l.profile.mainContainer,
    command: ['sh', '-c', script],
    stdin: Buffer.from(nonceFileContent(nonce), 'utf8'),
    ...(l.signal ? { signal: l.signal } : {}),
  });
  if (res.exitCode !== 0) throw new LaunchError(STAGE.agentctlConnect, 'NonceDeliveryFailed', `writing a fresh agentctl nonce into ${pod} exited with ${res.exitCode}: ${res.stderr.trim().slice(-300)}`);
  return nonce;
}
