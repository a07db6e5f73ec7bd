/**
 * The proxy's open connections, by session: what `revoke(sessionId)` closes and `stats()` counts.
 *
 * A lookup of the sessions port may be asynchronous, so a session can be revoked between its lookup
 * and the connection's registration: `begin()` hands out a ticket before the lookup and `add()`
 * refuses a connection whose session was revoked after that ticket.
 * @module
 */
import type { EgressReason } from './types.js';

/** An open tunnel or request, as the registry sees it. */
export interface OpenConnection {
  /** Ends the connection now (both sides), recording `reason`. */
  close(reason: EgressReason): void;
  /** Bytes the proxy holds for it in user space (stream buffers both ways). */
  buffered(): number;
}

export interface ProxyStats {
  readonly openConnections: number;
  /** Bytes held in the proxy's stream buffers across all open connections. */
  readonly bufferedBytes: number;
}

export class ConnectionRegistry {
  private readonly bySession = new Map<string, Set<OpenConnection>>();
  /** Session -> revocation number, kept only while lookups are pending. */
  private readonly revokedAt = new Map<string, number>();
  private revocations = 0;
  private pending = 0;

  /** Call before a session lookup; pass the ticket to `add` and always call `end` after. */
  begin(): number {
    this.pending += 1;
    return this.revocations;
  }

  end(): void {
    this.pending -= 1;
    if (this.pending === 0) this.revokedAt.clear();
  }

  /** Registers the connection; false (and nothing registered) when the session was revoked since `ticket`. */
  add(sessionId: string, conn: OpenConnection, ticket: number): boolean {
    if ((this.revokedAt.get(sessionId) ?? -1) > ticket) return false;
    let set = this.bySession.get(sessionId);
    if (set === undefined) this.bySession.set(sessionId, (set = new Set()));
    set.add(conn);
    return true;
  }

  delete(sessionId: string, conn: OpenConnection): void {
    const set = this.bySession.get(sessionId);
    if (set?.delete(conn) === true && set.size === 0) this.bySession.delete(sessionId);
  }

  /** Closes the session's open connections; returns how many. */
  revoke(sessionId: string): number {
    this.revocations += 1;
    if (this.pending > 0) this.revokedAt.set(sessionId, this.revocations);
    const set = [...(this.bySession.get(sessionId) ?? [])];
    for (const conn of set) conn.close('revoked');
    return set.length;
  }

  closeAll(reason: EgressReason): void {
    for (const set of [...this.bySession.values()]) for (const conn of [...set]) conn.close(reason);
  }

  stats(): ProxyStats {
    let openConnections = 0;
    let bufferedBytes = 0;
    for (const set of this.bySession.values()) {
      for (const conn of set) {
        openConnections += 1;
        bufferedBytes += conn.buffered();
      }
    }
    return { openConnections, bufferedBytes };
  }
}
