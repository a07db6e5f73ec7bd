/**
 * Parses `git status --porcelain=v1 -b` (the branch line, then `XY path` or `XY old -> new`).
 * @module
 */

interface StatusEntry {
  /** Index (staged) status letter, ' ' when unchanged, '?' untracked. */
  index: string;
  /** Work-tree status letter. */
  worktree: string;
  path: string;
  /** For renames and copies: the old path. */
  from?: string;
  /** A short human word: modified, added, deleted, renamed, untracked … */
  label: string;
}

export interface GitStatus {
  branch: string | null;
  upstream: string | null;
  ahead: number;
  behind: number;
  entries: StatusEntry[];
}

const LABELS: Record<string, string> = {
  M: 'modified',
  A: 'added',
  D: 'deleted',
  R: 'renamed',
  C: 'copied',
  U: 'conflict',
  T: 'type changed',
  '?': 'untracked',
  '!': 'ignored',
};

export function parseGitStatus(text: string): GitStatus {
  const out: GitStatus = { branch: null, upstream: null, ahead: 0, behind: 0, entries: [] };
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('## ')) {
      parseBranchLine(line.slice(3), out);
      continue;
    }
    const index = line[0] ?? ' ';
    const worktree = line[1] ?? ' ';
    const rest = unquote(line.slice(3));
    const arrow = rest.indexOf(' -> ');
    const letter = index === 'U' || worktree === 'U' ? 'U' : index !== ' ' && index !== '?' ? index : worktree;
    const entry: StatusEntry = { index, worktree, path: rest, label: LABELS[letter] ?? 'changed' };
    if (arrow >= 0 && (index === 'R' || index === 'C')) {
      entry.from = unquote(rest.slice(0, arrow));
      entry.path = unquote(rest.slice(arrow + 4));
    }
    out.entries.push(entry);
  }
  return out;
}

function parseBranchLine(s: string, out: GitStatus): void {
  const bracket = /\s\[(.*)\]$/.exec(s);
  const head = bracket ? s.slice(0, bracket.index) : s;
  if (bracket) {
    out.ahead = Number(/ahead (\d+)/.exec(bracket[1]!)?.[1] ?? 0);
    out.behind = Number(/behind (\d+)/.exec(bracket[1]!)?.[1] ?? 0);
  }
  if (head.startsWith('No commits yet on ')) out.branch = head.slice('No commits yet on '.length);
  else if (head.startsWith('HEAD (no branch)')) out.branch = null;
  else {
    const dots = head.indexOf('...');
    out.branch = dots >= 0 ? head.slice(0, dots) : head;
    out.upstream = dots >= 0 ? head.slice(dots + 3) : null;
  }
}

/** git quotes paths with special characters as C strings. */
function unquote(p: string): string {
  if (!(p.startsWith('"') && p.endsWith('"') && p.length >= 2)) return p;
  const bytes: number[] = [];
  const body = p.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== '\\') {
      for (const b of new TextEncoder().encode(c)) bytes.push(b);
      continue;
    }
    const n = body[++i] ?? '';
    if (/[0-7]/.test(n)) {
      bytes.push(parseInt(body.slice(i, i + 3), 8));
      i += 2;
    } else bytes.push(({ n: 10, t: 9, '"': 34, '\\': 92 } as Record<string, number>)[n] ?? n.charCodeAt(0));
  }
  return new TextDecoder().decode(new Uint8Array(bytes));
}
