/**
 * Read-only access to the output a process left in an instance's state directory, for readers
 * outside a running agentctl (the local executor serves `berth logs` of a stopped session with it).
 *
 * This is the one sanctioned way to read agentctl's on-disk process records from elsewhere: the
 * file layout and line format stay private to this directory. Pure: it never writes, compacts or
 * repairs anything, so it is safe next to a live agentctl appending to the same files.
 * @module
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { META_FILE, OUTPUT_FILE, processDir, ProcessMetaSchema, type ProcessMeta } from './meta.js';
import { OutputLog, type StoredChunk } from './output-log.js';

export type { StoredChunk } from './output-log.js';

export interface RecordedOutput {
  /** Chunks with `seq >= from`, oldest first (at most what the log retained). */
  readonly chunks: readonly StoredChunk[];
  /** The first sequence number still on disk (older output was dropped by the retention cap). */
  readonly firstAvailable: number;
  /** The sequence number the next chunk would have had. */
  readonly next: number;
}

/** Process ids are a single path segment (agentctl's own ids are `[A-Za-z0-9._-]`). */
const SAFE_ID = /^(?!\.{1,2}$)[A-Za-z0-9._-]{1,128}$/;

/**
 * The recorded output of process `processId` under `stateDir` (an instance's state directory),
 * from sequence `from` on; null when no such process was ever recorded there.
 */
export function readRecordedOutput(stateDir: string, processId: string, from = 0): RecordedOutput | null {
  if (!SAFE_ID.test(processId)) return null;
  const dir = processDir(stateDir, processId);
  const meta = readMeta(dir, processId);
  const file = join(dir, OUTPUT_FILE);
  if (meta === undefined && !existsSync(file)) return null;
  // The file is already bounded by agentctl's retention; read all of it.
  const log = OutputLog.load(file, Number.MAX_SAFE_INTEGER, meta?.next_seq ?? 0);
  const slice = log.page(Math.max(0, from), Number.MAX_SAFE_INTEGER);
  return { chunks: slice.chunks, firstAvailable: slice.firstAvailable, next: log.nextSeq };
}

function readMeta(dir: string, id: string): ProcessMeta | undefined {
  try {
    const meta = ProcessMetaSchema.parse(JSON.parse(readFileSync(join(dir, META_FILE), 'utf8')));
    return meta.id === id ? meta : undefined;
  } catch {
    return undefined;
  }
}
