import { describe, expect, it } from 'vitest';
import { procStartTime } from '../../shared/proc.js';
import { agentProcesses, epochToTicks, parseStatLine, readProcTable, type StatEntry } from './procs.js';

function entry(pid: number, ppid: number, over: Partial<StatEntry> = {}): StatEntry {
  return { pid, ppid, pgrp: pid, session: pid, state: 'S', startTicks: 1000 + pid, comm: `p${pid}`, ...over };
}

const pids = (list: readonly StatEntry[]): number[] => list.map((e) => e.pid);

describe('parseStatLine', () => {
  it('reads pid, ppid, group, session, state and start time past a command name with spaces and parentheses', () => {
    const fields = ['S', '7', '8', '9', ...Array<string>(15).fill('0'), '4242', '0'];
    expect(parseStatLine(`123 (a (weird) name) ${fields.join(' ')}\n`)).toEqual({
      pid: 123,
      ppid: 7,
      pgrp: 8,
      session: 9,
      state: 'S',
      startTicks: 4242,
      comm: 'a (weird) name',
    });
    expect(parseStatLine('garbage')).toBeNull();
    expect(parseStatLine('1 (x) S 1')).toBeNull();
  });
});

describe('agentProcesses', () => {
  const agent = 100;
  const table = [
    entry(1, 0),
    entry(agent, 1),
    entry(101, agent, { pgrp: agent, session: agent }), // the tool call's shell
    entry(102, 101, { pgrp: agent, session: agent }), // its `sleep 1200`
    entry(103, 101, { pgrp: 103, session: 103 }), // a grandchild that called setsid: still a descendant
    entry(104, 1, { pgrp: agent, session: agent }), // `sleep &` whose shell exited: reparented, same session
    entry(105, 1, { pgrp: 105, session: agent }), // another group of the same session
    entry(106, agent, { state: 'Z' }), // a zombie is not alive
    entry(200, 1), // unrelated
    entry(201, 200, { pgrp: 200, session: 200 }),
  ];

  it('finds descendants and members of the agent\'s session or group, without the agent, zombies or strangers', () => {
    expect(pids(agentProcesses(table, agent, null))).toEqual([101, 102, 103, 104, 105]);
  });

  it('skips processes started at or before notBeforeTicks (an ACP adapter\'s own helpers)', () => {
    expect(pids(agentProcesses(table, agent, 1102))).toEqual([103, 104, 105]);
  });

  it('finds nothing for an agent without children', () => {
    expect(agentProcesses(table, 200 + 1, null)).toEqual([]);
  });
});

describe('/proc', () => {
  it('lists this process with its parent and start time', () => {
    const me = readProcTable().find((e) => e.pid === process.pid);
    expect(me).toMatchObject({ pid: process.pid, ppid: process.ppid, startTicks: Number(procStartTime(process.pid)) });
  });

  it('converts epoch time to the ticks of stat\'s start time (this process started about when Node says it did)', () => {
    const now = Date.now();
    const ticks = epochToTicks(now - process.uptime() * 1000, now);
    expect(ticks).not.toBeNull();
    // Node counts its uptime from a little after the kernel started the process: within a second
    expect(Math.abs((ticks as number) - Number(procStartTime(process.pid)))).toBeLessThan(100);
  });
});
