/**
 * Who listens on a loopback port (Linux /proc). Before the controller sends the API token to the
 * control port recorded for a running agentctl (a reconnect after a controller restart), it checks
 * that the listening socket on 127.0.0.1:port is one of that agentctl's own descriptors: a process
 * that took the port while agentctl was not listening on it gets nothing.
 * @module
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** TCP state LISTEN in /proc/net/tcp. */
const LISTEN = '0A';
/** 127.0.0.1 as /proc/net/tcp prints it (the address in host byte order): little- and big-endian hosts. */
const LOOPBACK_HEX = new Set(['0100007F', '7F000001']);

/**
 * The socket inodes listening on 127.0.0.1:`port` in a /proc/net/tcp table (pure: the table's text
 * in, inode numbers out). Lines that do not parse are skipped.
 */
export function loopbackListenerInodes(table: string, port: number): string[] {
  const out: string[] = [];
  for (const line of table.split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    // sl local_address rem_address st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode …
    if (fields.length < 10) continue;
    const [address, hexPort] = (fields[1] ?? '').split(':');
    if (address === undefined || hexPort === undefined || fields[3] !== LISTEN) continue;
    if (!LOOPBACK_HEX.has(address.toUpperCase()) || Number.parseInt(hexPort, 16) !== port) continue;
    const inode = fields[9];
    if (inode !== undefined && /^\d+$/.test(inode) && inode !== '0') out.push(inode);
  }
  return out;
}

/**
 * True when process `pid` holds the socket listening on 127.0.0.1:`port` (in this process's
 * network namespace). False when someone else holds it, nobody listens, or /proc cannot tell.
 */
export function listensOn(pid: number, port: number): boolean {
  let inodes: string[];
  try {
    inodes = loopbackListenerInodes(readFileSync('/proc/net/tcp', 'utf8'), port);
  } catch {
    return false;
  }
  if (inodes.length === 0) return false;
  const wanted = new Set(inodes.map((i) => `socket:[${i}]`));
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return false;
  }
  for (const fd of fds) {
    try {
      if (wanted.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return true;
    } catch {
      // closed meanwhile
    }
  }
  return false;
}
