/**
 * Process start times from /proc (Linux), the guard against pid reuse: a pid recorded together
 * with its start time names one process, not whatever process gets that number later.
 * @module
 */
import { readFileSync } from 'node:fs';

/** Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or null. */
export function procStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // comm (field 2) may contain spaces and parentheses: split after the last ')'
    const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return rest[19] ?? null;
  } catch {
    return null;
  }
}
