/**
 * Parser for `git status --porcelain=v2 --branch -z` output (pure).
 * Format reference: git-status(1), "Porcelain Format Version 2".
 * @module
 */
import type { GitFileStatus, GitStatus } from '../../protocol/index.js';

/** Splits off `count` space-separated fields; the rest (which may contain spaces) is the last item. */
function fields(line: string, count: number): string[] | null {
  const out: string[] = [];
  let rest = line;
  for (let i = 0; i < count; i++) {
    const space = rest.indexOf(' ');
    if (space === -1) return null;
    out.push(rest.slice(0, space));
    rest = rest.slice(space + 1);
  }
  out.push(rest);
  return out;
}

function xy(code: string | undefined): { index: string; worktree: string } {
  return { index: code?.[0] ?? '.', worktree: code?.[1] ?? '.' };
}

/** Parses porcelain v2 (`-z`) output; unknown record types are ignored. */
export function parsePorcelainV2(output: string): GitStatus {
  const status: GitStatus = { branch: null, head: null, upstream: null, ahead: 0, behind: 0, files: [], clean: true };
  const records = output.split('\0');
  for (let i = 0; i < records.length; i++) {
    const record = records[i] as string;
    if (record === '') continue;
    if (record.startsWith('# ')) {
      parseHeader(status, record.slice(2));
      continue;
    }
    const file = parseEntry(record, () => records[++i]);
    if (file !== null) status.files.push(file);
  }
  status.clean = status.files.every((f) => f.kind === 'ignored');
  return status;
}

function parseHeader(status: GitStatus, header: string): void {
  const [key, ...rest] = header.split(' ');
  const value = rest.join(' ');
  switch (key) {
    case 'branch.oid':
      status.head = value === '(initial)' ? null : value;
      break;
    case 'branch.head':
      status.branch = value === '(detached)' ? null : value;
      break;
    case 'branch.upstream':
      status.upstream = value;
      break;
    case 'branch.ab': {
      const match = /^\+(\d+) -(\d+)$/.exec(value);
      if (match) {
        status.ahead = Number(match[1]);
        status.behind = Number(match[2]);
      }
      break;
    }
    default:
      break;
  }
}

function parseEntry(record: string, nextRecord: () => string | undefined): GitFileStatus | null {
  switch (record[0]) {
    case '1': {
      // 1 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <path>
      const f = fields(record, 8);
      if (f === null) return null;
      return { path: f[8] as string, orig_path: null, ...xy(f[1]), kind: 'changed' };
    }
    case '2': {
      // 2 <XY> <sub> <mH> <mI> <mW> <hH> <hI> <X><score> <path>\0<origPath>
      const f = fields(record, 9);
      if (f === null) return null;
      return { path: f[9] as string, orig_path: nextRecord() ?? null, ...xy(f[1]), kind: 'renamed' };
    }
    case 'u': {
      // u <XY> <sub> <m1> <m2> <m3> <mW> <h1> <h2> <h3> <path>
      const f = fields(record, 10);
      if (f === null) return null;
      return { path: f[10] as string, orig_path: null, ...xy(f[1]), kind: 'unmerged' };
    }
    case '?':
      return { path: record.slice(2), orig_path: null, index: '?', worktree: '?', kind: 'untracked' };
    case '!':
      return { path: record.slice(2), orig_path: null, index: '!', worktree: '!', kind: 'ignored' };
    default:
      return null;
  }
}
