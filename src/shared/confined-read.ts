/**
 * Reading files the controller finds where an agent can write (its agentctl state dir, a session
 * dir): no symbolic link is followed on the way, only a regular file is read, and never more than a
 * cap. A FIFO would block an open or a read for ever, a link to /dev/zero never ends, a sparse file
 * can claim any size — none of them may stall or exhaust `berth serve`.
 * @module
 */
import { closeSync, constants, existsSync, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { lstat, open, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { errnoCode } from './errors.js';

/** Thrown when a file to read is a link, a FIFO, a device, a directory or too large; `file` is its path. */
export class UnsafeFileError extends Error {
  override readonly name = 'UnsafeFileError';
  constructor(
    readonly file: string,
    readonly reason: string,
    action: 'read' | 'opened' = 'read',
  ) {
    super(`${file} ${reason}; not ${action}`);
  }
}

interface ConfinedRead {
  /** The bytes read: all of the file, or (`tail`) its last `maxBytes`. */
  readonly data: Buffer;
  /** Offset of `data` in the file (> 0 when only the tail was read). */
  readonly start: number;
  /** The file's size when it was opened. */
  readonly size: number;
}

interface ConfinedReadOptions {
  /** Most bytes read. */
  readonly maxBytes: number;
  /** A larger file is read from `size - maxBytes` on instead of refused. @default false */
  readonly tail?: boolean;
}

const { O_RDONLY, O_WRONLY, O_APPEND, O_CREAT, O_NOFOLLOW, O_NONBLOCK, O_DIRECTORY } = constants;
/**
 * Opening `/proc/self/fd/<dir fd>/<name>` resolves `name` in the directory that fd holds, wherever
 * it has been moved since: `openat` for Node, so a parent swapped for a link after it was checked
 * is not followed. Without /proc each prefix is opened by path (a narrow race remains).
 */
const PROC_FD = '/proc/self/fd';
const SEGMENT = /^(?!\.{1,2}$)[^/\0]+$/;

/**
 * Reads `root/segments…` where `root` is a directory this process trusts and everything below it
 * may have been replaced by someone else. Null when a segment does not exist. Throws
 * UnsafeFileError (naming the path) for a link, a non-directory on the way, a final file that is
 * not a regular file, or one larger than `maxBytes` (unless `tail`).
 */
export async function readConfinedFile(root: string, segments: readonly string[], opts: ConfinedReadOptions): Promise<ConfinedRead | null> {
  const file = await openConfined(root, segments);
  if (file === null) return null;
  try {
    const { size } = await file.stat();
    const path = join(root, ...segments);
    if (size > opts.maxBytes && opts.tail !== true) throw new UnsafeFileError(path, `is larger than ${opts.maxBytes} bytes`);
    const start = Math.max(0, size - opts.maxBytes);
    const data = Buffer.alloc(Math.min(size, opts.maxBytes));
    let got = 0;
    while (got < data.length) {
      const { bytesRead } = await file.read(data, got, data.length - got, start + got);
      if (bytesRead === 0) break;
      got += bytesRead;
    }
    return { data: got === data.length ? data : data.subarray(0, got), start, size };
  } finally {
    await file.close();
  }
}

/** Opens the regular file `root/segments…` without following a link in any segment (see readConfinedFile). */
async function openConfined(root: string, segments: readonly string[]): Promise<FileHandle | null> {
  if (segments.length === 0 || !segments.every((s) => SEGMENT.test(s))) throw new Error(`confined read: bad path segments under ${root}`);
  const viaProc = existsSync(PROC_FD);
  let dir: FileHandle;
  try {
    dir = await open(root, O_RDONLY | O_DIRECTORY);
  } catch (err) {
    if (errnoCode(err) === 'ENOENT') return null;
    throw err;
  }
  try {
    for (const [i, segment] of segments.entries()) {
      const last = i === segments.length - 1;
      const path = join(root, ...segments.slice(0, i + 1));
      // O_NONBLOCK: opening a FIFO returns at once (to be refused below) instead of waiting for a writer
      const flags = O_RDONLY | O_NOFOLLOW | (last ? O_NONBLOCK : O_DIRECTORY);
      let next: FileHandle;
      try {
        next = await open(viaProc ? `${PROC_FD}/${dir.fd}/${segment}` : path, flags);
      } catch (err) {
        const code = errnoCode(err);
        if (code === 'ENOENT') return null;
        if (code === 'ELOOP') throw new UnsafeFileError(path, 'is a symbolic link');
        if (code === 'ENOTDIR' && last) throw new UnsafeFileError(path, 'is not a regular file');
        // O_DIRECTORY wins over O_NOFOLLOW: a link on the way also answers ENOTDIR
        if (code === 'ENOTDIR') throw new UnsafeFileError(path, (await isLink(path)) ? 'is a symbolic link' : 'is not a directory');
        if (code === 'ENXIO') throw new UnsafeFileError(path, 'is not a regular file (a socket)');
        throw err;
      }
      if (last) {
        const stats = await next.stat().catch(async (err: unknown) => {
          await next.close();
          throw err;
        });
        if (!stats.isFile()) {
          await next.close();
          throw new UnsafeFileError(path, `is not a regular file (${kindOf(stats)})`);
        }
        return next;
      }
      await dir.close();
      dir = next;
    }
    return null;
  } finally {
    await dir.close();
  }
}

/**
 * The last `maxBytes` of the file at `path` (synchronous, for short tails in error messages): the
 * final component is not followed, and only a regular file is read. Null when it does not exist;
 * UnsafeFileError otherwise as readConfinedFile.
 */
export function readConfinedTailSync(path: string, maxBytes: number): Buffer | null {
  let fd: number;
  try {
    fd = openSync(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ENOENT') return null;
    if (code === 'ELOOP') throw new UnsafeFileError(path, 'is a symbolic link');
    if (code === 'ENXIO') throw new UnsafeFileError(path, 'is not a regular file (a socket)');
    throw err;
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new UnsafeFileError(path, `is not a regular file (${kindOf(stats)})`);
    const start = Math.max(0, stats.size - maxBytes);
    const data = Buffer.alloc(Math.min(stats.size, maxBytes));
    let got = 0;
    while (got < data.length) {
      const n = readSync(fd, data, got, data.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    return data.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens the regular file at `path` for appending (created 0600 when missing) without following a
 * link in its last component and without waiting: a FIFO there fails at once (UnsafeFileError).
 */
export function openAppendConfinedSync(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o600);
  } catch (err) {
    const code = errnoCode(err);
    if (code === 'ELOOP') throw new UnsafeFileError(path, 'is a symbolic link', 'opened');
    // a FIFO without a reader
    if (code === 'ENXIO') throw new UnsafeFileError(path, 'is not a regular file (a FIFO or socket)', 'opened');
    throw err;
  }
  const stats = fstatSync(fd);
  if (!stats.isFile()) {
    closeSync(fd);
    throw new UnsafeFileError(path, `is not a regular file (${kindOf(stats)})`, 'opened');
  }
  return fd;
}

async function isLink(path: string): Promise<boolean> {
  return lstat(path).then(
    (st) => st.isSymbolicLink(),
    () => false,
  );
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'a directory';
  if (stats.isFIFO()) return 'a FIFO';
  if (stats.isCharacterDevice()) return 'a character device';
  if (stats.isBlockDevice()) return 'a block device';
  if (stats.isSocket()) return 'a socket';
  return 'not a file';
}
