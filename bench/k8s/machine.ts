/**
 * What every Kubernetes benchmark records about the machine it ran on, and the writer that puts a
 * benchmark's section into BENCHMARKS.md from its result file.
 * @module
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { arch, availableParallelism, cpus, loadavg, platform, release, totalmem } from 'node:os';
import { join } from 'node:path';
import { upsertSection } from '../cli/report.js';

export interface BenchMachine {
  node: string;
  platform: string;
  cpu: string;
  cpus: number;
  memory_gib: number;
  loadavg_at_start: number[];
  loadavg_at_end: number[];
  kubernetes: string;
  client_node: string;
}

/** The installed @kubernetes/client-node version (from its package.json under `root`). */
export function clientNodeVersion(root: string): string {
  return (JSON.parse(readFileSync(join(root, 'node_modules', '@kubernetes', 'client-node', 'package.json'), 'utf8')) as { version: string }).version;
}

/** The short commit of the Berth tree at `root` ('unknown' outside a git checkout). */
export function berthCommit(root: string): string {
  try {
    return execFileSync('git', ['-C', root, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

/** This machine now; `loadStart` is the load average read when the run began. */
export function benchMachine(root: string, kubernetes: string, loadStart: number[]): BenchMachine {
  return {
    node: process.version,
    platform: `${platform()}-${arch()} ${release()}`,
    cpu: cpus()[0]?.model ?? 'unknown',
    cpus: availableParallelism(),
    memory_gib: Math.round((totalmem() / (1 << 30)) * 10) / 10,
    loadavg_at_start: loadStart,
    loadavg_at_end: loadavg(),
    kubernetes,
    client_node: clientNodeVersion(root),
  };
}

/**
 * Puts the section `render` makes of bench/results/`name`.json into `root`/BENCHMARKS.md, in place
 * of an earlier one (or before `beforeHeading`); does nothing when the result file is missing.
 */
export function writeResultSection<T>(root: string, name: string, heading: string, render: (result: T) => string, beforeHeading?: string): void {
  const file = join(root, 'bench', 'results', `${name}.json`);
  if (!existsSync(file)) return;
  const mdFile = join(root, 'BENCHMARKS.md');
  const md = existsSync(mdFile) ? readFileSync(mdFile, 'utf8') : '# Benchmarks\n';
  const before = beforeHeading !== undefined && md.includes(`${beforeHeading}\n`) ? beforeHeading : undefined;
  const section = render(JSON.parse(readFileSync(file, 'utf8')) as T);
  writeFileSync(mdFile, before !== undefined ? upsertSection(md, heading, section, before) : upsertSection(md, heading, section));
}
