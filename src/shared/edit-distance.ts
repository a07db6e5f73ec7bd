/**
 * "Did you mean …?" for misspelled keys: the Levenshtein distance of short strings and the closest
 * known key within a small distance. Used by `berth.yaml` and Pod-template validation alike.
 * @module
 */

/** Levenshtein distance (small strings: config keys, field names). */
function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min((prev[j] ?? 0) + 1, (cur[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length] ?? 0;
}

/** The first candidate within `maxDistance` edits of `key` (the closest one), or undefined. */
export function closestKey(key: string, candidates: Iterable<string>, maxDistance = 2): string | undefined {
  let best: string | undefined;
  let bestDistance = maxDistance + 1;
  for (const candidate of candidates) {
    const d = editDistance(candidate, key);
    if (d < bestDistance) [best, bestDistance] = [candidate, d];
  }
  return best;
}
