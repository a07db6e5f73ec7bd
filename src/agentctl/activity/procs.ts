/**
 * The processes an agent started, from /proc (Linux; inside a container or bubblewrap this is the
 * sandbox's pid namespace, where agentctl and its agents live).
 *
 * `/proc/*` is scanned rather than `/proc/<pid>/task/<tid>/children`, which needs
 * CONFIG_PROC_CHILDREN and misses orphans. A process counts for agent P (P itself excluded) when:
 * - its parent chain reaches P (a descendant), or
 * - its session or process group is P: agentctl spawns every agent detached, so the agent leads
 *   its own session and group, and a descendant whose parent exited (`sleep 1200 &` from a tool
 *   call's shell, reparented to init or a subreaper) keeps both.
 * A process that left both by calling `setsid` itself and whose parent exited is not found.
 * Zombies are not alive. For ACP agents the caller excludes processes started before the ACP
 * session opened (see snapshot.ts).
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import { splitProcStat } from '../../shared/proc.js';

/** What the activity check needs of one process (from its stat line). */
export interface StatEntry {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  readonly session: number;
  /** Field 3 of stat: `Z` is a zombie. */
  readonly state: string;
  /** Field 22 of stat: start time in clock ticks since boot. */
  readonly startTicks: number;
  /** Field 2: the executable's name (at most 15 characters). */
  readonly comm: string;
}

/** Linux's USER_HZ (the unit of stat's start time and /proc/uptime's ticks), 100 on every architecture Node runs on. */
const TICKS_PER_SECOND = 100;
const MAX_COMMAND_CHARS = 120;

/** Parses `/proc/<pid>/stat` (the command name may hold spaces and parentheses: split after its last `)`). */
export function parseStatLine(text: string): StatEntry | null {
  const split = splitProcStat(text);
  if (split === null || !text.includes('(')) return null;
  const { fields: rest, comm } = split;
  const pid = Number(split.pid);
  const [state, ppid, pgrp, session] = [rest[0], Number(rest[1]), Number(rest[2]), Number(rest[3])];
  const startTicks = Number(rest[19]);
  if (state === undefined || ![pid, ppid, pgrp, session, startTicks].every(Number.isSafeInteger)) return null;
  return { pid, ppid, pgrp, session, state, startTicks, comm };
}

/** The command line of `entry` (its comm when unreadable), truncated. */
export function commandOf(entry: StatEntry): string {
  const { pid, comm } = entry;
  let argv: string[] = [];
  try {
    argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter((a) => a !== '');
  } catch {
    // gone, or not ours to read
  }
  const command = argv.length > 0 ? argv.join(' ') : comm;
  return command.length > MAX_COMMAND_CHARS ? `${command.slice(0, MAX_COMMAND_CHARS - 1)}…` : command;
}

/** Every process visible in /proc (empty without /proc). */
export function readProcTable(): StatEntry[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  const table: StatEntry[] = [];
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    let text: string;
    try {
      text = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // exited while we scanned
    }
    const entry = parseStatLine(text);
    if (entry !== null) table.push(entry);
  }
  return table;
}

/**
 * The live processes agent `agentPid` started (see the module comment), skipping those started at
 * or before `notBeforeTicks` (null: none skipped). Pure over `table`.
 */
export function agentProcesses(table: readonly StatEntry[], agentPid: number, notBeforeTicks: number | null): StatEntry[] {
  const children = new Map<number, StatEntry[]>();
  for (const e of table) {
    const siblings = children.get(e.ppid);
    if (siblings === undefined) children.set(e.ppid, [e]);
    else siblings.push(e);
  }
  const found = new Map<number, StatEntry>();
  const queue = [agentPid];
  for (let pid = queue.shift(); pid !== undefined; pid = queue.shift()) {
    for (const child of children.get(pid) ?? []) {
      if (found.has(child.pid) || child.pid === agentPid) continue;
      found.set(child.pid, child);
      queue.push(child.pid);
    }
  }
  for (const e of table) if (e.pid !== agentPid && (e.session === agentPid || e.pgrp === agentPid)) found.set(e.pid, e);
  return [...found.values()]
    .filter((e) => e.state !== 'Z' && (notBeforeTicks === null || e.startTicks > notBeforeTicks))
    .sort((a, b) => a.pid - b.pid);
}

/** Converts an epoch-ms time to clock ticks since boot (null without /proc/uptime). */
export function epochToTicks(ms: number, now: number): number | null {
  try {
    const uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
    if (!Number.isFinite(uptime)) return null;
    return Math.floor((uptime - (now - ms) / 1000) * TICKS_PER_SECOND);
  } catch {
    return null;
  }
}
