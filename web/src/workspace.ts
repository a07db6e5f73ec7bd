/**
 * Commands in a session's workspace through `BerthClient.exec`, with their output collected as
 * text and capped (a huge diff or file must not freeze the page).
 * @module
 */
import type { BerthClient } from '../../src/api/index.js';

interface RunResult {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  /** The output went past the cap and was cut. */
  truncated: boolean;
  /** A NUL byte was seen: binary content. */
  binary: boolean;
}

export async function run(client: BerthClient, id: string, argv: string[], opts: { capBytes?: number; signal?: AbortSignal } = {}): Promise<RunResult> {
  const cap = opts.capBytes ?? 1024 * 1024;
  const out: Uint8Array[] = [];
  const err: Uint8Array[] = [];
  let outBytes = 0;
  let truncated = false;
  let binary = false;
  const ac = new AbortController();
  const signal = opts.signal ? AbortSignal.any([opts.signal, ac.signal]) : ac.signal;
  let exitCode: number | null = null;
  try {
    const r = await client.exec(
      id,
      { argv },
      {
        signal,
        onOutput: (c) => {
          if (c.stream === 'stderr') {
            err.push(c.data);
            return;
          }
          if (truncated) return;
          const room = cap - outBytes;
          const piece = c.data.length > room ? c.data.subarray(0, room) : c.data;
          if (piece.includes(0)) binary = true;
          out.push(piece);
          outBytes += piece.length;
          if (c.data.length > room) {
            truncated = true;
            ac.abort();
          }
        },
      },
    );
    exitCode = r.exitCode;
  } catch (e) {
    if (!(truncated && ac.signal.aborted)) throw e;
  }
  return { stdout: decode(out), stderr: decode(err), exitCode, truncated, binary };
}

function decode(parts: Uint8Array[]): string {
  const d = new TextDecoder();
  return parts.map((p) => d.decode(p, { stream: true })).join('') + d.decode();
}

/** Splits NUL-separated output (`git ls-files -z`). */
export function splitNul(s: string): string[] {
  return s.split('\0').filter((p) => p !== '');
}
