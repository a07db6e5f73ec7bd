/**
 * CPU time spent by the whole machine (every process: the controller, the test cluster's API
 * server, kubelet, containerd, the Pods), read from /proc/stat, in milliseconds. A figure taken
 * around a launch says how much CPU the launch cost everything together, and whether a burst
 * was bound by the machine's CPUs rather than by waiting.
 * @module
 */
import { readFileSync } from 'node:fs';

/** Busy CPU time of all CPUs since boot (user, nice, system, irq, softirq, steal), ms. */
export function machineBusyMs(): number {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number);
  const [user = 0, nice = 0, system = 0, , , irq = 0, softirq = 0, steal = 0] = fields;
  // /proc/stat counts in USER_HZ ticks, 100 per second on Linux
  return (user + nice + system + irq + softirq + steal) * 10;
}
