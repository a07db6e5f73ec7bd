/**
 * The one reader of `/proc/<pid>/stat` (Linux): a process's state and start time, the guard against
 * pid reuse — a pid recorded together with its start time names one process, not whatever process
 * gets that number later. Used by the controller, the local executor and agentctl.
 * @module
 */
import { readFileSync } from 'node:fs';

/** The fields of `/proc/<pid>/stat` Berth uses. */
interface ProcStat {
  /** Field 3: `R`, `S`, `D`, `Z` (zombie), `T`, … */
  readonly state: string;
  /** Field 22: start time in clock ticks since boot, as the kernel wrote it (a decimal string). */
  readonly startTime: string;
}

/**
 * Parses the text of `/proc/<pid>/stat`, or null when it is not one. The command name (field 2)
 * may contain spaces and parentheses, so the fields after it are split after its *last* `)`.
 */
export function parseProcStat(text: string): ProcStat | null {
  const split = splitProcStat(text);
  if (split === null) return null;
  // after ") " come fields 3, 4, …: state is field 3, start time field 22
  const rest = split.fields;
  const state = rest[0];
  const startTime = rest[19];
  if (state === undefined || !/^[A-Za-z]$/.test(state) || startTime === undefined || !/^\d+$/.test(startTime)) return null;
  return { state, startTime };
}

/**
 * `/proc/<pid>/stat` split around the command name: the text before its `(` (the pid), the name, and
 * the fields after its *last* `)` (field 3 first); null when there is no such name.
 */
export function splitProcStat(text: string): { pid: string; comm: string; fields: string[] } | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (close < 0 || open > close) return null;
  return { pid: text.slice(0, Math.max(0, open)).trim(), comm: text.slice(open + 1, close), fields: text.slice(close + 2).trimEnd().split(' ') };
}

/** `/proc/<pid>/stat` of a process, or null (gone, no /proc, unreadable). */
export function readProcStat(pid: number): ProcStat | null {
  try {
    return parseProcStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return null;
  }
}

/** Start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat), or null. */
export function procStartTime(pid: number): string | null {
  return readProcStat(pid)?.startTime ?? null;
}

/** State of a process (field 3 of /proc/<pid>/stat: `Z` is a zombie), or null. */
export function procState(pid: number): string | null {
  return readProcStat(pid)?.state ?? null;
}
