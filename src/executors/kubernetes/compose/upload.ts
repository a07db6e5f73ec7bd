/**
 * The bootstrap upload: ONE `sh -c <script>` exec whose stdin carries every file (spec §5.1–§5.3,
 * improved from four execs to one). No tar, no `kubectl cp`: only POSIX sh, `dd`, `cat`,
 * `chmod`, `mv`, `wc`, present in busybox and every distro image.
 *
 * Framing: the sizes are in the script, the bytes on stdin. A sized file must be read exactly:
 * a plain `dd bs=4096 count=K` on a pipe can get short reads (and lose bytes), `head -c` may
 * over-read through stdio buffering (busybox does). So each is read as ONE block of its exact size
 * with `dd iflag=fullblock` (GNU and busybox; probed once, first), which keeps reading until the
 * block is full and never past it; a file over {@link ONE_BLOCK_MAX} bytes (dd would hold it in
 * memory) as whole 4 KiB blocks and the remainder with `dd bs=1`, which is exact on a pipe because
 * a 1-byte read can never take more than it asks for; without `fullblock` the whole file goes
 * through `dd bs=1` (slow, ~5 µs a byte, but correct). The one large file
 * (agentctl) comes last and is read with `cat` to EOF, so the I/O layer must close stdin after the
 * last chunk. Each file goes to a temp name under `umask 077`, is checked for its exact size,
 * chmod-ed and renamed into place; an optional final step (running prepare.sh) comes next and the
 * start marker last, so the main container never starts on a half-written bootstrap.
 * @module
 */
import { posix } from 'node:path';
import { ComposeFieldError } from './errors.js';
import { shQuote } from './shell.js';

export interface UploadFile {
  /** Absolute, normalized path below one of the plan's roots. */
  path: string;
  /** Permission bits, e.g. 0o600. */
  mode: number;
  data: Uint8Array;
}

export interface UploadPlan {
  /** Volume mount points; every path must lie strictly below one. They must exist and not be symlinks. */
  roots: readonly string[];
  /** Directories to create (or re-chmod) first, e.g. the private HOME with 0o700. */
  directories?: readonly { path: string; mode: number }[];
  /** Small files, framed by size, in stdin order. */
  files: readonly UploadFile[];
  /** The one large file, read to EOF after the small ones. */
  tail?: UploadFile | null;
  /**
   * Shell lines run after every file is in place and before the marker (e.g. prepare.sh, see
   * bootstrapPlans). They run under `set -eu`; to fail they exit with their own status.
   */
  finalStep?: readonly string[];
  /** An empty file written last (mode 0600): the start marker. */
  marker?: string | null;
  /**
   * Shell lines run after the marker (e.g. prepare.sh while agentctl, started by the marker, boots
   * meanwhile); same rules as {@link UploadPlan.finalStep}.
   */
  afterMarker?: readonly string[];
}

interface UploadCommand {
  /** Run as `["sh", "-c", script]`; contains paths and sizes only. */
  script: string;
  /** The stdin chunks, to stream in order (the tail is passed through, not copied). Then close stdin. */
  stdin: Buffer[];
}

/** Largest sized file read as one `dd` block (larger ones go in 4 KiB blocks). */
export const ONE_BLOCK_MAX = 4 * 1024 * 1024;

/** Exit status for a refused destination (symlinked or non-directory parent, directory in the way). */
export const EXIT_UNSAFE_DESTINATION = 73;
/** Exit status when a file arrived with the wrong size (stdin ended early). */
export const EXIT_SHORT_WRITE = 74;

const PRELUDE = `set -eu
umask 077
tmp=
trap 'rm -f "$tmp"' EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
fail() { code=$1; shift; echo "berth upload: $*" >&2; exit "$code"; }
root() { if [ -L "$1" ] || [ ! -d "$1" ]; then fail ${EXIT_UNSAFE_DESTINATION} "volume root $1 is missing or a symlink"; fi; }
dir() {
  if [ -L "$1" ]; then fail ${EXIT_UNSAFE_DESTINATION} "refusing symlinked directory $1"; fi
  if [ -e "$1" ]; then [ -d "$1" ] || fail ${EXIT_UNSAFE_DESTINATION} "$1 is not a directory"; else mkdir "$1" || fail ${EXIT_UNSAFE_DESTINATION} "cannot create $1"; fi
}
# the temp name is made with builtins only (no mktemp fork per file): the volumes are the Pod's own
# and nothing else writes to them before the start marker; a name that exists all the same is refused
n=0
begin() {
  if [ -L "$1" ] || [ -d "$1" ]; then fail ${EXIT_UNSAFE_DESTINATION} "refusing to replace $1 (a symlink or a directory)"; fi
  n=$((n + 1))
  tmp="$2/.berth-upload.$$.$n"
  if [ -e "$tmp" ] || [ -L "$tmp" ]; then t=$tmp; tmp=; fail ${EXIT_UNSAFE_DESTINATION} "refusing the existing temp file $t"; fi
  : >"$tmp"
}
fb=
if dd if=/dev/null of=/dev/null bs=4096 count=0 iflag=fullblock 2>/dev/null; then fb=1; fi
take() {
  if [ -n "$fb" ] && [ "$1" -le ${ONE_BLOCK_MAX} ]; then dd bs="$1" count=1 iflag=fullblock 2>/dev/null >>"$tmp" || return 1; return 0; fi
  q=$(($1 / 4096)); r=$(($1 % 4096))
  if [ -z "$fb" ]; then q=0; r=$1; fi
  if [ "$q" -gt 0 ]; then dd bs=4096 count="$q" iflag=fullblock 2>/dev/null >>"$tmp" || return 1; fi
  if [ "$r" -gt 0 ]; then dd bs=1 count="$r" 2>/dev/null >>"$tmp" || return 1; fi
}
finish() {
  size=$(wc -c <"$tmp")
  [ $((size)) -eq "$3" ] || fail ${EXIT_SHORT_WRITE} "$1: received $((size)) of $3 bytes"
  # made under umask 077, it is 0600: only another mode costs a chmod
  [ "$2" = 0600 ] || chmod "$2" "$tmp"
  mv -f "$tmp" "$1"
  tmp=
}
`;

function octal(mode: number): string {
  if (!Number.isInteger(mode) || mode < 0 || mode > 0o7777) throw new Error(`invalid file mode ${mode}`);
  return mode.toString(8).padStart(4, '0');
}

/** The root `path` lies strictly below; throws a ComposeFieldError (`upload.path`) otherwise. */
function rootOf(path: string, roots: readonly string[]): string {
  const clean = posix.normalize(path);
  if (path.includes('\0') || !path.startsWith('/') || clean !== path || path.endsWith('/')) {
    throw new ComposeFieldError('upload.path', `${JSON.stringify(path)} must be an absolute, clean path`);
  }
  const root = roots.find((r) => path.startsWith(`${r}/`));
  if (root === undefined) throw new ComposeFieldError('upload.path', `${path} is not under a bootstrap volume`);
  return root;
}

/** The directories between `root` (exclusive) and `path`'s parent (inclusive), outermost first. */
function parents(root: string, path: string): string[] {
  const rel = path.slice(root.length + 1).split('/').slice(0, -1);
  return rel.map((_, i) => `${root}/${rel.slice(0, i + 1).join('/')}`);
}

/** Builds the script and stdin of the single bootstrap exec. */
export function bootstrapUpload(plan: UploadPlan): UploadCommand {
  const q = shQuote;
  const lines: string[] = [PRELUDE];
  const seen = new Set<string>();
  for (const root of plan.roots) lines.push(`root ${q(root)}`);
  const ensureParents = (path: string): string => {
    const root = rootOf(path, plan.roots);
    for (const d of parents(root, path)) {
      if (!seen.has(d)) lines.push(`dir ${q(d)}`);
      seen.add(d);
    }
    return posix.dirname(path);
  };
  for (const d of plan.directories ?? []) {
    ensureParents(`${d.path}/x`);
    lines.push(`chmod ${octal(d.mode)} ${q(d.path)}`);
  }
  const stdin: Buffer[] = [];
  const paths = new Set<string>();
  const write = (file: UploadFile, reader: string | null): void => {
    if (paths.has(file.path)) throw new ComposeFieldError('upload.path', `${file.path} is uploaded twice`);
    paths.add(file.path);
    const parent = ensureParents(file.path);
    lines.push(`begin ${q(file.path)} ${q(parent)}`);
    if (reader !== null) lines.push(`${reader} || fail ${EXIT_SHORT_WRITE} ${q(`cannot write ${file.path}`)}`);
    lines.push(`finish ${q(file.path)} ${octal(file.mode)} ${file.data.length}`);
  };
  for (const f of plan.files) {
    write(f, f.data.length === 0 ? null : `take ${f.data.length}`);
    if (f.data.length > 0) stdin.push(Buffer.from(f.data.buffer, f.data.byteOffset, f.data.length));
  }
  if (plan.tail) {
    write(plan.tail, 'cat >"$tmp"');
    stdin.push(Buffer.from(plan.tail.data.buffer, plan.tail.data.byteOffset, plan.tail.data.length));
  }
  lines.push(...(plan.finalStep ?? []));
  if (plan.marker) write({ path: plan.marker, mode: 0o600, data: new Uint8Array() }, null);
  lines.push(...(plan.afterMarker ?? []));
  lines.push('');
  return { script: lines.join('\n'), stdin };
}

/**
 * The script of the same upload sent compressed: each stdin chunk travels as its own gzip member
 * (gzip decompresses concatenated members as one stream, so large constant chunks can be compressed
 * once and reused) and the script reads everything through `gzip -dc`. Only for images where the
 * probe found gzip.
 */
export function compressedUploadScript(script: string): string {
  return `set -eu\ngzip -dc | (\n${script}\n)\n`;
}
