/**
 * The one-shot nonce handshake and bearer-token checks.
 *
 * The controller starts agentctl with a nonce — in a file (`AGENTCTL_BOOTSTRAP_NONCE_FILE`, read
 * and removed at start) or in `AGENTCTL_BOOTSTRAP_NONCE` — and trades it once for a random 256-bit
 * token that lives only in this process's memory, so old tokens die with the process. A restarted
 * process finds no file (it was removed): until its controller writes a fresh one, which the next
 * handshake reads, every handshake is refused.
 * @module
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ENV, HEADER } from '../protocol/index.js';
import { ConfigFieldError } from '../shared/config-field-error.js';
import { bearerToken, tokenMatches } from '../shared/http/index.js';
import { protocolError } from './errors.js';
import { takeNonceFile } from './nonce-file.js';

export class Auth {
  #nonce: string | null;
  readonly #nonceFile: string | null;
  #consumed = false;
  #token: string | null = null;

  /**
   * @param nonce the bootstrap nonce, or `null` when none is configured (handshakes always fail).
   * @param nonceFile the nonce file, read (and removed) now and at each handshake until one succeeds.
   * @throws ConfigFieldError for a nonce file that is not a small regular file with a nonce.
   */
  constructor(nonce: string | null, nonceFile: string | null = null) {
    this.#nonce = nonce;
    this.#nonceFile = nonceFile;
    if (nonceFile !== null) this.#nonce = takeNonceFile(nonceFile) ?? nonce;
  }

  /** Trades the nonce for the token; throws 403 when it is wrong, already used or not configured. */
  handshake(nonce: string): string {
    if (this.#nonceFile !== null && !this.#consumed) {
      // a nonce written since (the controller of a restarted agentctl delivers a fresh one) replaces the one held
      try {
        this.#nonce = takeNonceFile(this.#nonceFile) ?? this.#nonce;
      } catch (err) {
        if (!(err instanceof ConfigFieldError)) throw err;
        throw protocolError('forbidden', `the nonce file is unusable: ${err.message}`);
      }
    }
    if (this.#nonce === null) {
      throw protocolError('forbidden', `handshake is disabled: agentctl was started without ${ENV.bootstrapNonce} or its nonce file`);
    }
    // Compare before looking at `#consumed` so both failure paths cost the same.
    const matches = tokenMatches(nonce, this.#nonce);
    if (!matches || this.#consumed) throw protocolError('forbidden', 'invalid or already-consumed nonce');
    this.#consumed = true;
    this.#token = randomBytes(32).toString('hex');
    return this.#token;
  }

  /** Throws 401 unless the request carries `Authorization: Bearer <token>`. */
  verifyBearer(req: IncomingMessage): void {
    const presented = bearerToken(req);
    if (presented === undefined) throw protocolError('unauthorized', 'missing or invalid Authorization header');
    if (!tokenMatches(presented, this.#token)) throw protocolError('unauthorized', 'invalid auth token');
  }

  /** Throws 401 (token) or 403 (instance id) unless the request targets `instanceId` with the token. */
  verifyInstance(req: IncomingMessage, instanceId: string): void {
    this.verifyBearer(req);
    const header = req.headers[HEADER.instanceId];
    if (typeof header !== 'string' || header === '') {
      throw protocolError('forbidden', `missing X-Instance-ID header`);
    }
    if (header !== instanceId) throw protocolError('forbidden', 'X-Instance-ID does not match this instance');
  }
}
