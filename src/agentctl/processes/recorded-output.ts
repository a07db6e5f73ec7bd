/**
 * Read-only access to the output a process left in an instance's state directory, for readers
 * outside a running agentctl (the local executor serves `berth logs` of a stopped session with it).
 *
 * This is the one sanctioned way to read agentctl's on-disk process records from elsewhere: the
 * file layout and line format stay private to this directory. Pure: it never writes, compacts or
 * repairs anything, so it is safe next to a live agentctl appending to the same files. The files are
 * the agent's to write: they are read as untrusted (no links, regular files only, bounded, async).
 * @module
 */
import { relative, sep } from 'node:path';
import { LIMITS } from '../../protocol/index.js';
import { readConfinedFile } from '../../shared/confined-read.js';
import { META_FILE, OUTPUT_FILE, ProcessMetaSchema, type ProcessMeta } from './meta.js';
import { OutputLog, type StoredChunk } from './output-log.js';

export { UnsafeFileError } from '../../shared/confined-read.js';

interface RecordedOutput {
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
 * Most bytes read of an output file: twice agentctl's default retention, enough for the newest
 * retained output in base64 lines (agentctl keeps the file near that size by rewriting it).
 */
export const MAX_OUTPUT_FILE_READ = 2 * LIMITS.defaultMaxOutputBytes;
/** Most bytes of a meta.json (its command may hold a prompt). */
const MAX_META_BYTES = 1024 * 1024;

/**
 * The recorded output of process `processId` in `stateDir` (an instance's state directory, below
 * `trustedRoot`: everything under that root may be the agent's doing), from sequence `from` on;
 * null when no such process was ever recorded there. No link under `trustedRoot` is followed and
 * only regular files are read (UnsafeFileError naming the file otherwise); at most the last
 * MAX_OUTPUT_FILE_READ bytes of the output file are read.
 */
export async function readRecordedOutput(trustedRoot: string, stateDir: string, processId: string, from = 0): Promise<RecordedOutput | null> {
  if (!SAFE_ID.test(processId)) return null;
  const rel = relative(trustedRoot, stateDir);
  if (rel === '' || rel.startsWith('..') || rel.startsWith(sep)) throw new Error(`recorded output: ${stateDir} is not inside ${trustedRoot}`);
  const dir = [...rel.split(sep), 'processes', processId];
  const meta = await readMeta(trustedRoot, dir, processId);
  const output = await readConfinedFile(trustedRoot, [...dir, OUTPUT_FILE], { maxBytes: MAX_OUTPUT_FILE_READ, tail: true });
  if (meta === undefined && output === null) return null;
  let text = output?.data.toString('utf8') ?? '';
  // a read that starts inside the file starts inside a line: that line is incomplete
  if (output !== null && output.start > 0) text = text.slice(text.indexOf('\n') + 1);
  const log = OutputLog.parse(text, LIMITS.defaultMaxOutputBytes, meta?.next_seq ?? 0);
  const slice = log.page(Math.max(0, from), Number.MAX_SAFE_INTEGER);
  return { chunks: slice.chunks, firstAvailable: slice.firstAvailable, next: log.nextSeq };
}

/** The process's meta.json; undefined when absent or not a record of `id` (a broken one is skipped as before). */
async function readMeta(root: string, dir: readonly string[], id: string): Promise<ProcessMeta | undefined> {
  const read = await readConfinedFile(root, [...dir, META_FILE], { maxBytes: MAX_META_BYTES });
  if (read === null) return undefined;
  try {
    const meta = ProcessMetaSchema.parse(JSON.parse(read.data.toString('utf8')));
    return meta.id === id ? meta : undefined;
  } catch {
    return undefined;
  }
}
