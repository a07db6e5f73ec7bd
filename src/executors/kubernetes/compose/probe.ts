/**
 * The first exec into a new Pod: tells whether the image has Node >= 18 (deliver the agentctl
 * bundle) or not (deliver the SEA binary). It doubles as the proof that the main container accepts
 * an exec, which is what the bootstrap waits for (not the kubelet's Running status, seen later).
 *
 * Once an image has been probed, later launches of it skip the probe: their first exec is the
 * bootstrap itself, led by {@link probeGuard}, which re-checks what the upload relies on (cheap
 * shell built-ins, one `uname`) and exits {@link EXIT_PROBE_MISMATCH} before reading any stdin
 * when the image changed under its name.
 * @module
 */
import type { AgentctlFlavor } from './env-file.js';
import { shQuote } from './shell.js';

/** Exit status of a bootstrap exec whose image no longer matches the probe result it was built from. */
export const EXIT_PROBE_MISMATCH = 76;

/** Oldest Node major the agentctl bundle runs on. */
const MIN_BUNDLE_NODE_MAJOR = 18;

/** Prints `node=<version|none>`, `arch=<uname -m>` and `gzip=yes|no` (can the upload be compressed); never fails. */
export const PROBE_SCRIPT = [
  'v=none',
  'if command -v node >/dev/null 2>&1; then v=$(node --version 2>/dev/null) || v=none; fi',
  'echo "node=$v"',
  'echo "arch=$(uname -m 2>/dev/null || echo unknown)"',
  'if command -v gzip >/dev/null 2>&1 && printf x | gzip -c 2>/dev/null | gzip -dc >/dev/null 2>&1; then echo gzip=yes; else echo gzip=no; fi',
  '',
].join('\n');

export interface ProbeResult {
  flavor: AgentctlFlavor;
  /** `v20.11.1`, or null when there is no usable node. */
  nodeVersion: string | null;
  /** `x86_64`, `aarch64` …, or null when not reported. */
  arch: string | null;
  /** Whether `gzip -dc` works in the image: the bootstrap upload is then sent compressed. */
  gzip: boolean;
}

/** Parses the probe's stdout. Anything unexpected (no line, an odd version) means the SEA binary. */
export function parseProbeOutput(stdout: string): ProbeResult {
  let nodeVersion: string | null = null;
  let arch: string | null = null;
  let gzip = false;
  for (const line of stdout.split(/\r?\n/)) {
    if (line.trim() === 'gzip=yes') gzip = true;
    if (line.startsWith('node=')) {
      const v = line.slice(5).trim();
      nodeVersion = /^v\d+\.\d+\.\d+/.test(v) ? v : null;
    } else if (line.startsWith('arch=')) {
      const a = line.slice(5).trim();
      arch = a === '' || a === 'unknown' ? null : a;
    }
  }
  const major = nodeVersion === null ? 0 : Number(/^v(\d+)/.exec(nodeVersion)?.[1] ?? 0);
  return { flavor: major >= MIN_BUNDLE_NODE_MAJOR ? 'bundle' : 'sea', nodeVersion, arch, gzip };
}

/**
 * Shell lines that exit {@link EXIT_PROBE_MISMATCH} unless the container still has what `probe`
 * found and the upload built from it needs: `node` on PATH for the bundle, `gzip` for a compressed
 * upload, the same CPU; then prints one byte to stdout, the sign that the exec runs. (The Node version is not re-run: a Node too old for the bundle makes
 * agentctl exit at once, which fails the launch with the container's reason, and the next launch probes again.)
 */
export function probeGuard(probe: ProbeResult): string {
  const miss = `exit ${EXIT_PROBE_MISMATCH}`;
  const lines: string[] = [];
  if (probe.flavor === 'bundle') lines.push(`command -v node >/dev/null 2>&1 || ${miss}`);
  if (probe.gzip) lines.push(`command -v gzip >/dev/null 2>&1 || ${miss}`);
  if (probe.arch !== null) lines.push(`[ "$(uname -m 2>/dev/null)" = ${shQuote(probe.arch)} ] || ${miss}`);
  // the sign that the exec runs (see execInContainer's onFirstStdout)
  lines.push("printf '.'");
  return lines.map((l) => `${l}\n`).join('');
}
