/**
 * The one-shot nonce handshake and bearer-token checks.
 *
 * The controller starts agentctl with `AGENTCTL_BOOTSTRAP_NONCE` and trades it once for a random
 * 256-bit token that lives only in this process's memory. A restarted process accepts the same
 * nonce once more and issues a new token, so old tokens die with the process.
 * @module
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ENV, HEADER } from '../protocol/index.js';
import { HttpError } from './errors.js';

/** The scheme name is case-insensitive (RFC 9110 §11.1); the token is not. */
const BEARER = /^Bearer ([^\s]+)$/i;

/** Hashing first gives equal-length inputs, so `timingSafeEqual` leaks neither content nor length. */
function constantTimeEqual(a: string, b: string): boolean {
  const ha = createHash('sha256').update(a, 'utf8').digest();
  const hb = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(ha, hb);
}

export class Auth {
  readonly #nonce: string | null;
  #consumed = false;
  #token: string | null = null;

  /** @param nonce the bootstrap nonce, or `null` when none is configured (handshakes always fail). */
  constructor(nonce: string | null) {
    this.#nonce = nonce;
  }

  /** Trades the nonce for the token; throws 403 when it is wrong, already used or not configured. */
  handshake(nonce: string): string {
    if (this.#nonce === null) {
      throw new HttpError('forbidden', `handshake is disabled: agentctl was started without ${ENV.bootstrapNonce}`);
    }
    // Compare before looking at `#consumed` so both failure paths cost the same.
    const matches = constantTimeEqual(nonce, this.#nonce);
    if (!matches || this.#consumed) throw new HttpError('forbidden', 'invalid or already-consumed nonce');
    this.#consumed = true;
    this.#token = randomBytes(32).toString('hex');
    return this.#token;
  }

  /** Throws 401 unless the request carries `Authorization: Bearer <token>`. */
  verifyBearer(req: IncomingMessage): void {
    const header = req.headers[HEADER.authorization];
    const match = typeof header === 'string' ? BEARER.exec(header) : null;
    if (match === null) throw new HttpError('unauthorized', 'missing or invalid Authorization header');
    if (this.#token === null || !constantTimeEqual(match[1] as string, this.#token)) {
      throw new HttpError('unauthorized', 'invalid auth token');
    }
  }

  /** Throws 401 (token) or 403 (instance id) unless the request targets `instanceId` with the token. */
  verifyInstance(req: IncomingMessage, instanceId: string): void {
    this.verifyBearer(req);
    const header = req.headers[HEADER.instanceId];
    if (typeof header !== 'string' || header === '') {
      throw new HttpError('forbidden', `missing X-Instance-ID header`);
    }
    if (header !== instanceId) throw new HttpError('forbidden', 'X-Instance-ID does not match this instance');
  }
}
