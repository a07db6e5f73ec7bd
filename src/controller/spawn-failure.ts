/**
 * What the controller makes of agentctl's `spawn_failed` (a command that could not be started):
 * the exit code a shell would give and a short reason, from the errno agentctl sends — never from
 * parsing its message.
 * @module
 */
import { isSpawnFailedError } from '../agentctl-client/index.js';

interface SpawnFailure {
  /** The errno agentctl reported (`ENOENT`, `EACCES`, …). */
  readonly errno: string;
  /** As a shell reports it: 127 when the command was not found, 126 when it could not be executed. */
  readonly exitCode: 126 | 127;
  /** A short reason in a shell's words (`command not found`, `permission denied`, …). */
  readonly reason: string;
}

const REASONS: Readonly<Record<string, string>> = {
  ENOENT: 'command not found',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOTDIR: 'not a directory',
  ENOEXEC: 'exec format error',
  EISDIR: 'is a directory',
  E2BIG: 'argument list too long',
  ENOMEM: 'out of memory',
  EAGAIN: 'resource temporarily unavailable',
};

/** The spawn failure `err` reports, or undefined when it is not one. */
export function spawnFailure(err: unknown): SpawnFailure | undefined {
  if (!isSpawnFailedError(err)) return undefined;
  const { errno } = err;
  return { errno, exitCode: errno === 'ENOENT' ? 127 : 126, reason: REASONS[errno] ?? `cannot execute (${errno})` };
}
