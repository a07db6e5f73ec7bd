/**
 * A simple line diff of an edit's old and new text (pure): the common head and tail are trimmed,
 * the middle is diffed by longest common subsequence (or shown as removed-then-added when too big),
 * and long unchanged runs are folded to a few lines of context.
 * @module
 */

type DiffLine = { op: 'same' | 'add' | 'del'; text: string } | { op: 'skip'; count: number };

/** Lines of context kept around a change. */
const CONTEXT = 2;
/** Above this many cells the middle is not diffed line by line. */
const MAX_CELLS = 250_000;

export function lineDiff(oldText: string | null, newText: string): DiffLine[] {
  const a = oldText === null ? [] : lines(oldText);
  const b = lines(newText);
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const same = (lines: string[]): DiffLine[] => lines.map((text) => ({ op: 'same', text }));
  const middle = middleDiff(a.slice(head, a.length - tail), b.slice(head, b.length - tail));
  return fold([...same(a.slice(0, head)), ...middle, ...same(a.slice(a.length - tail))]);
}

/** The lines of a text; a final newline ends the last line (it adds no empty one). */
function lines(text: string): string[] {
  if (text === '') return [];
  const out = text.split('\n');
  if (out[out.length - 1] === '') out.pop();
  return out;
}

function middleDiff(a: string[], b: string[]): DiffLine[] {
  if (a.length * b.length > MAX_CELLS) return [...a.map((text) => ({ op: 'del' as const, text })), ...b.map((text) => ({ op: 'add' as const, text }))];
  // lcs[i][j]: the longest common subsequence of a[i..] and b[j..]
  const lcs = Array.from({ length: a.length + 1 }, () => new Array<number>(b.length + 1).fill(0));
  for (let i = a.length - 1; i >= 0; i--) {
    for (let j = b.length - 1; j >= 0; j--) {
      lcs[i]![j] = a[i] === b[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
    }
  }
  const out: DiffLine[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (i < a.length && j < b.length && a[i] === b[j]) {
      out.push({ op: 'same', text: a[i++]! });
      j++;
    } else if (i < a.length && (j >= b.length || lcs[i + 1]![j]! >= lcs[i]![j + 1]!)) out.push({ op: 'del', text: a[i++]! });
    else out.push({ op: 'add', text: b[j++]! });
  }
  return out;
}

/** Folds unchanged runs longer than the context around them into `skip`. */
function fold(lines: DiffLine[]): DiffLine[] {
  const out: DiffLine[] = [];
  let run: DiffLine[] = [];
  const flush = (atStart: boolean, atEnd: boolean): void => {
    const keepBefore = atStart ? 0 : CONTEXT;
    const keepAfter = atEnd ? 0 : CONTEXT;
    if (run.length > keepBefore + keepAfter + 1) {
      out.push(...run.slice(0, keepBefore), { op: 'skip', count: run.length - keepBefore - keepAfter }, ...run.slice(run.length - keepAfter));
    } else out.push(...run);
    run = [];
  };
  for (const line of lines) {
    if (line.op === 'same') run.push(line);
    else {
      flush(out.length === 0, false);
      out.push(line);
    }
  }
  flush(out.length === 0, true);
  return out;
}
