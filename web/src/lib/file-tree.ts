/** Builds a directory tree from a flat list of paths (pure). @module */

export interface TreeDir {
  name: string;
  path: string;
  dirs: TreeDir[];
  files: { name: string; path: string }[];
}

export function buildTree(paths: readonly string[]): TreeDir {
  const root: TreeDir = { name: '', path: '', dirs: [], files: [] };
  const index = new Map<string, TreeDir>([['', root]]);
  for (const p of [...new Set(paths)].sort()) {
    const parts = p.split('/').filter(Boolean);
    let dir = root;
    for (let i = 0; i < parts.length - 1; i++) {
      const path = parts.slice(0, i + 1).join('/');
      let next = index.get(path);
      if (!next) {
        next = { name: parts[i]!, path, dirs: [], files: [] };
        index.set(path, next);
        dir.dirs.push(next);
      }
      dir = next;
    }
    const name = parts[parts.length - 1];
    if (name) dir.files.push({ name, path: parts.join('/') });
  }
  return root;
}

/** Classifies each line of a unified diff for colouring. */
export function diffLineKind(line: string): 'file' | 'hunk' | 'add' | 'del' | 'meta' | 'ctx' {
  if (line.startsWith('diff --git') || line.startsWith('+++ ') || line.startsWith('--- ')) return 'file';
  if (line.startsWith('@@')) return 'hunk';
  if (line.startsWith('+')) return 'add';
  if (line.startsWith('-')) return 'del';
  if (/^(index |new file|deleted file|similarity|rename |old mode|new mode|Binary files)/.test(line)) return 'meta';
  return 'ctx';
}
