// The architecture check, run by `npm run lint` after ESLint: `node scripts/check-architecture.mjs`.
// It reads the layer table in README.md (## Architecture), so the table is the one place the layering
// is written down, and fails on
//   cycle          an import cycle among the modules of src/ or web/src (type-only imports count);
//   layer          an import of a layer the importing layer's row does not list (or of test code);
//   entry          an import from outside a package (a folder with an index.ts) of anything but the
//                  package's entries (index.ts, plus the extra entries its row names);
//   unused-export  an export in src/ or web/src that no other file in the repository imports
//                  (a re-export in an index.ts counts as a use only when the index's export is used);
//   layer-table    a table that does not match the folders (a missing folder, an index.ts it ignores).
// One line per violation: file:line, rule, what, and what to do next. `--report` prints the same list
// but exits 0 (to see the list while it is still being worked off); without it any violation fails.
// Pure analysis (`analyze`, `parseLayerTable`) apart from reading the files, for the unit test.
import ts from 'typescript';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { dirname, join, posix } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** Folders read for imports; src/ and web/src/ are checked, the rest count as users of exports. */
const SCAN_ROOTS = ['src', 'web', 'test', 'bench', 'scripts'];
const SKIP_DIRS = new Set(['node_modules', 'dist', 'results', 'artifacts', 'coverage']);
const SOURCE_EXT = /\.(ts|tsx|mts|mjs|js)$/;
const TEST_FILE = /\.test\.(ts|tsx|mjs)$/;

/** The folder of a layer named in the table: `web` is web/src, any other name a folder of src/. */
export const layerFolder = (name) => (name === 'web' ? 'web/src' : `src/${name}`);
const isChecked = (file) => file.startsWith('src/') || file.startsWith('web/src/');
const isTest = (file) => TEST_FILE.test(file);
const inside = (file, folder) => file.startsWith(`${folder}/`);
const ticked = (cell) => [...cell.matchAll(/`([^`]+)`/g)].map((m) => m[1].trim());

/**
 * Parses README's layer table: the markdown table whose header starts `| layer | may import | entries |`,
 * rows bottom to top. Names are the `backticked` words of a cell, entries its backticked file names
 * (`index.ts`); the rest is prose.
 * An entries cell saying "any file" leaves the folder open (it has no index.ts).
 */
export function parseLayerTable(markdown) {
  const lines = markdown.split('\n');
  const start = lines.findIndex((l) => /^\|\s*layer\s*\|\s*may import\s*\|\s*entries\s*\|/i.test(l));
  if (start < 0) throw new Error('README.md has no layer table (a table whose header starts "| layer | may import | entries |")');
  const rows = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.trim().startsWith('|')) break;
    const [layer = '', mayImport = '', entries = ''] = line.trim().slice(1, -1).split('|');
    const [name] = ticked(layer);
    if (name === undefined) continue;
    rows.push({ name, folder: layerFolder(name), mayImport: ticked(mayImport), entries: /any file/i.test(entries) ? null : ticked(entries).filter((e) => SOURCE_EXT.test(e)) });
  }
  return rows;
}

// ---------------------------------------------------------------------------------------------
// Reading one module: what it imports (with the names it uses) and what it exports.

/** The names taken from a dynamic `import()`: destructured, a property read, or `.then((m) => m.x)`; else all. */
function dynamicImportNames(call) {
  let node = call;
  const up = () => {
    while (ts.isParenthesizedExpression(node.parent)) node = node.parent;
  };
  up();
  if (ts.isAwaitExpression(node.parent)) {
    node = node.parent;
    up();
  }
  const parent = node.parent;
  if (ts.isVariableDeclaration(parent) && ts.isObjectBindingPattern(parent.name)) {
    return parent.name.elements.map((e) => (e.propertyName ?? e.name).getText());
  }
  if (ts.isPropertyAccessExpression(parent) && parent.expression === node) {
    if (parent.name.text !== 'then' || node !== call) return [parent.name.text];
    const callback = ts.isCallExpression(parent.parent) ? parent.parent.arguments[0] : undefined;
    const param = callback && (ts.isArrowFunction(callback) || ts.isFunctionExpression(callback)) ? callback.parameters[0] : undefined;
    if (param && ts.isIdentifier(param.name)) {
      const names = [];
      const find = (n) => {
        if (ts.isPropertyAccessExpression(n) && ts.isIdentifier(n.expression) && n.expression.text === param.name.text) names.push(n.name.text);
        ts.forEachChild(n, find);
      };
      find(callback.body);
      if (names.length > 0) return names;
    }
  }
  return ['*'];
}

const hasModifier = (node, kind) => ts.canHaveModifiers(node) && (ts.getModifiers(node) ?? []).some((m) => m.kind === kind);

/** The names a declaration statement binds (a variable statement may bind several). */
function declaredNames(statement) {
  if (ts.isVariableStatement(statement)) {
    const names = [];
    const collect = (name) => (ts.isIdentifier(name) ? names.push(name.text) : name.elements.forEach((e) => ts.isBindingElement(e) && collect(e.name)));
    statement.declarationList.declarations.forEach((d) => collect(d.name));
    return names;
  }
  return statement.name && ts.isIdentifier(statement.name) ? [statement.name.text] : [];
}

/** Imports, exports and identifier counts of one file (paths are repository-relative, posix). */
export function parseModule(file, text) {
  const kind = file.endsWith('.tsx') ? ts.ScriptKind.TSX : /\.[mc]?js$/.test(file) ? ts.ScriptKind.JS : ts.ScriptKind.TS;
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, kind);
  const lineOf = (node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const mod = { file, imports: [], exports: new Map(), stars: [], identifiers: new Map() };
  const bindings = new Map(); // local name -> the import it came from, for `export { x }` of an import
  for (const st of source.statements) {
    if (ts.isImportDeclaration(st) && ts.isStringLiteral(st.moduleSpecifier)) {
      const spec = st.moduleSpecifier.text;
      const clause = st.importClause;
      const names = [];
      const bind = (local, name) => {
        names.push(name);
        bindings.set(local, { spec, name });
      };
      if (clause?.name) bind(clause.name.text, 'default');
      const bound = clause?.namedBindings;
      if (bound && ts.isNamespaceImport(bound)) names.push('*');
      else bound?.elements.forEach((e) => bind(e.name.text, (e.propertyName ?? e.name).text));
      mod.imports.push({ spec, line: lineOf(st), names });
    } else if (ts.isExportDeclaration(st)) {
      const spec = st.moduleSpecifier && ts.isStringLiteral(st.moduleSpecifier) ? st.moduleSpecifier.text : undefined;
      const line = lineOf(st);
      if (spec !== undefined) mod.imports.push({ spec, line, names: [] }); // a dependency; a use only if re-exported names are used
      if (!st.exportClause) {
        if (spec !== undefined) mod.stars.push(spec);
      } else if (ts.isNamespaceExport(st.exportClause)) {
        mod.exports.set(st.exportClause.name.text, { line, from: { spec, name: '*' } });
      } else {
        for (const e of st.exportClause.elements) {
          const local = (e.propertyName ?? e.name).text;
          const from = spec !== undefined ? { spec, name: local } : bindings.get(local);
          mod.exports.set(e.name.text, { line: lineOf(e), from });
        }
      }
    } else if (ts.isExportAssignment(st)) {
      mod.exports.set('default', { line: lineOf(st) });
    } else if (hasModifier(st, ts.SyntaxKind.ExportKeyword)) {
      const names = hasModifier(st, ts.SyntaxKind.DefaultKeyword) ? ['default'] : declaredNames(st);
      for (const name of names) mod.exports.set(name, { line: lineOf(st) });
    }
  }
  const visit = (node) => {
    if (ts.isIdentifier(node)) mod.identifiers.set(node.text, (mod.identifiers.get(node.text) ?? 0) + 1);
    if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] && ts.isStringLiteralLike(node.arguments[0])) {
      mod.imports.push({ spec: node.arguments[0].text, line: lineOf(node), names: dynamicImportNames(node) });
    }
    if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument) && ts.isStringLiteral(node.argument.literal)) {
      let q = node.qualifier;
      while (q && ts.isQualifiedName(q)) q = q.left;
      mod.imports.push({ spec: node.argument.literal.text, line: lineOf(node), names: [q ? q.text : '*'] });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return mod;
}

/** The file a relative specifier names (`./x.js` is x.ts or x.tsx), or null (a package, or not found). */
export function resolveSpecifier(from, spec, exists) {
  if (!spec.startsWith('.')) return null;
  const base = posix.normalize(posix.join(posix.dirname(from), spec));
  const stem = base.replace(/\.(js|jsx|mjs|ts|tsx|mts)$/, '');
  const candidates =
    stem === base
      ? [`${base}.ts`, `${base}.tsx`, `${base}/index.ts`, `${base}/index.tsx`]
      : base.endsWith('.mjs')
        ? [`${stem}.mts`, base]
        : [`${stem}.ts`, `${stem}.tsx`, base];
  return candidates.find(exists) ?? null;
}

// ---------------------------------------------------------------------------------------------
// The rules.

/** Strongly connected components of more than one file (or a file importing itself): Tarjan. */
function importCycles(graph) {
  let index = 0;
  const info = new Map();
  const stack = [];
  const found = [];
  const connect = (v) => {
    info.set(v, { index, low: index, onStack: true });
    index += 1;
    stack.push(v);
    for (const w of graph.get(v) ?? []) {
      if (!info.has(w)) {
        connect(w);
        info.get(v).low = Math.min(info.get(v).low, info.get(w).low);
      } else if (info.get(w).onStack) info.get(v).low = Math.min(info.get(v).low, info.get(w).index);
    }
    if (info.get(v).low !== info.get(v).index) return;
    const component = [];
    let w;
    do {
      w = stack.pop();
      info.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? new Set()).has(v)) found.push(component.sort());
  };
  for (const v of [...graph.keys()].sort()) if (!info.has(v)) connect(v);
  return found;
}

/** One shortest cycle through `start` inside a component (breadth-first). */
function shortestCycle(graph, component, start) {
  const members = new Set(component);
  const previous = new Map([[start, null]]);
  const queue = [start];
  while (queue.length > 0) {
    const v = queue.shift();
    for (const w of graph.get(v) ?? []) {
      if (w === start) {
        const path = [v];
        while (previous.get(path[0]) !== null) path.unshift(previous.get(path[0]));
        return [...path, start];
      }
      if (members.has(w) && !previous.has(w)) {
        previous.set(w, v);
        queue.push(w);
      }
    }
  }
  return [start, start];
}

function checkCycles(graph, edges, report) {
  for (const component of importCycles(graph)) {
    const cycle = shortestCycle(graph, component, component[0]);
    const edge = edges.find((e) => e.from === cycle[0] && e.to === cycle[1]);
    const more = component.length > cycle.length - 1 ? ` (${component.length} files in all: ${component.join(', ')})` : '';
    report(cycle[0], edge.line, 'cycle', `imports '${edge.spec}': import cycle ${cycle.join(' -> ')}${more}`,
      'move what both sides need (types too: a type-only import counts) into a module below them, or pass it in');
  }
}

/** The table's own mistakes: unknown or higher layers named, folders missing, an index.ts ignored. */
function checkTable(layers, fileSet, report) {
  const seen = new Set();
  for (const row of layers) {
    const problem = (what) => report('README.md', 0, 'layer-table', `layer \`${row.name}\`: ${what}`, 'fix the layer table in README.md (## Architecture)');
    for (const name of row.mayImport) if (!seen.has(name)) problem(`may import \`${name}\`, which is not a layer below it in the table (rows go bottom to top)`);
    seen.add(row.name);
    const files = [...fileSet].filter((f) => inside(f, row.folder));
    if (files.length === 0) problem(`folder ${row.folder}/ has no source files`);
    const index = [`${row.folder}/index.ts`, `${row.folder}/index.tsx`].find((f) => fileSet.has(f));
    if (row.entries === null && index) problem(`${index} exists, but the entries cell says "any file"`);
    for (const entry of row.entries ?? []) if (!fileSet.has(`${row.folder}/${entry}`)) problem(`entry ${entry} does not exist`);
  }
}

/** The layer of a file: the row with the longest folder containing it. */
const layerOf = (layers, file) =>
  layers.filter((row) => inside(file, row.folder)).sort((a, b) => b.folder.length - a.folder.length)[0];

function checkLayers(layers, fileSet, edges, report) {
  const homeless = new Set();
  for (const file of [...fileSet].sort()) {
    const folder = posix.dirname(file);
    if (!isChecked(file) || layerOf(layers, file) || homeless.has(folder)) continue;
    homeless.add(folder);
    report(file, 1, 'layer', `${folder}/ is in no layer of the table`, 'add its folder to the layer table in README.md (## Architecture)');
  }
  for (const { from, to, spec, line } of edges) {
    const source = isChecked(from) ? layerOf(layers, from) : undefined;
    if (!source) continue;
    if (!isChecked(to)) {
      if (!isTest(from)) report(from, line, 'layer', `imports '${spec}': code outside src/ and web/src (test or tool code)`, 'move what it needs into src/, or make this file a test');
      continue;
    }
    const target = layerOf(layers, to);
    if (!target || target === source || source.mayImport.includes(target.name)) continue;
    const allowed = source.mayImport.length > 0 ? source.mayImport.join(', ') : 'nothing';
    report(from, line, 'layer', `imports '${spec}': layer ${source.name} may not import ${target.name} (it may import: ${allowed})`,
      isTest(from)
        ? 'a unit test uses its own layer and those below it: import from below, or move the test to test/'
        : 'move the shared piece down to a layer both may use, or have the caller above pass it in');
  }
}

/** Packages: the layer folders and every folder with an index.ts, each with the files outsiders may import. */
function packagesOf(layers, fileSet) {
  const packages = new Map();
  for (const file of fileSet) {
    if (isChecked(file) && /\/index\.tsx?$/.test(file)) packages.set(posix.dirname(file), new Set([file]));
  }
  for (const row of layers) {
    if (row.entries !== null && row.entries.length > 0) packages.set(row.folder, new Set(row.entries.map((e) => `${row.folder}/${e}`)));
  }
  return [...packages].sort((a, b) => a[0].length - b[0].length); // outermost first
}

function checkEntries(packages, edges, report) {
  for (const { from, to, spec, line } of edges) {
    if (!isChecked(from)) continue; // test/, bench/ and scripts/ may test internals (README: Architecture)
    const closed = packages.find(([folder, entries]) => inside(to, folder) && !inside(from, folder) && !entries.has(to));
    if (!closed) continue;
    const [folder, entries] = closed;
    const names = [...entries].map((e) => e.slice(folder.length + 1)).join(', ');
    report(from, line, 'entry', `imports '${spec}': past ${folder}/ (its entries: ${names})`,
      `import it from ${folder}/index.ts (export it there if it is meant for outside), or move the caller into ${folder}/`);
  }
}

/** Marks the used exports, following re-exports and `export *`; returns file -> Set of used names. */
function usedExports(modules, resolveFrom, entryFiles) {
  const used = new Map();
  const use = (file, name) => {
    const mod = modules.get(file);
    const names = used.get(file) ?? used.set(file, new Set()).get(file);
    if (!mod || names.has(name)) return;
    names.add(name);
    const follow = (spec, n) => {
      const target = resolveFrom(file, spec);
      if (target) use(target, n);
    };
    if (name === '*') {
      for (const [exported, e] of mod.exports) {
        if (e.from) follow(e.from.spec, e.from.name);
        else names.add(exported);
      }
      mod.stars.forEach((spec) => follow(spec, '*'));
      return;
    }
    const e = mod.exports.get(name);
    if (e?.from) follow(e.from.spec, e.from.name);
    else if (!e) mod.stars.forEach((spec) => follow(spec, name));
  };
  for (const mod of modules.values()) {
    for (const imp of mod.imports) {
      const target = resolveFrom(mod.file, imp.spec);
      if (target && target !== mod.file) imp.names.forEach((name) => use(target, name));
    }
  }
  entryFiles.forEach((file) => use(file, '*'));
  return used;
}

function checkUnusedExports(modules, resolveFrom, entryFiles, report) {
  const used = usedExports(modules, resolveFrom, entryFiles);
  const isUsed = (file, name) => used.get(file)?.has(name) || used.get(file)?.has('*');
  const deadReExports = new Map(); // "file\0name" of a dead original -> the index files re-exporting it
  const found = [];
  for (const mod of modules.values()) {
    if (!isChecked(mod.file) || isTest(mod.file) || entryFiles.includes(mod.file)) continue;
    for (const [name, e] of mod.exports) {
      if (isUsed(mod.file, name)) continue;
      const origin = e.from && e.from.name !== '*' ? resolveFrom(mod.file, e.from.spec) : null;
      if (origin && !isUsed(origin, e.from.name) && modules.get(origin)?.exports.has(e.from.name)) {
        const key = `${origin}\0${e.from.name}`;
        deadReExports.set(key, [...(deadReExports.get(key) ?? []), mod.file]);
        continue;
      }
      found.push({ mod, name, e });
    }
  }
  for (const { mod, name, e } of found) {
    const also = deadReExports.get(`${mod.file}\0${name}`);
    const tail = also ? ` (re-exported, unused, by ${also.join(', ')}: remove it there too)` : '';
    const next = e.from
      ? 'remove the re-export'
      : (mod.identifiers.get(name) ?? 0) > 1
        ? 'drop the `export` keyword (it is used in this file)'
        : 'delete it (nothing uses it)';
    report(mod.file, e.line, 'unused-export', `export \`${name}\` is imported by no other file${tail}`, next);
  }
}

/**
 * Checks the files (`Map` of repository-relative path -> text) against the layer table.
 * `entryFiles` are the modules built or loaded from outside (their exports count as used).
 * Returns the violations sorted by file and line.
 */
export function analyze({ files, layers, entryFiles = [] }) {
  const fileSet = new Set(files.keys());
  const modules = new Map([...files].map(([file, text]) => [file, parseModule(file, text)]));
  const resolved = new Map();
  const resolveFrom = (from, spec) => {
    const key = `${from}\0${spec}`;
    if (!resolved.has(key)) resolved.set(key, resolveSpecifier(from, spec, (f) => fileSet.has(f)));
    return resolved.get(key);
  };
  const edges = [];
  const graph = new Map();
  for (const mod of modules.values()) {
    for (const imp of mod.imports) {
      const to = resolveFrom(mod.file, imp.spec);
      if (!to) continue;
      edges.push({ from: mod.file, to, spec: imp.spec, line: imp.line });
      if (isChecked(mod.file) && isChecked(to)) (graph.get(mod.file) ?? graph.set(mod.file, new Set()).get(mod.file)).add(to);
    }
  }
  const violations = [];
  const report = (file, line, rule, message, next) => violations.push({ file, line, rule, message, next });
  checkTable(layers, fileSet, report);
  checkCycles(graph, edges, report);
  checkLayers(layers, fileSet, edges, report);
  checkEntries(packagesOf(layers, fileSet), edges, report);
  checkUnusedExports(modules, resolveFrom, entryFiles, report);
  return violations.sort((a, b) => a.file.localeCompare(b.file) || a.line - b.line || a.rule.localeCompare(b.rule));
}

/** One line per violation. */
export const formatViolation = (v) => `${v.file}${v.line > 0 ? `:${v.line}` : ''}: ${v.rule}: ${v.message}. Next: ${v.next}.`;

// ---------------------------------------------------------------------------------------------
// Reading the repository.

function sourceFiles(root) {
  const files = new Map();
  const walk = (dir) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory() && !SKIP_DIRS.has(entry.name) && !entry.name.startsWith('.')) walk(path);
      else if (entry.isFile() && SOURCE_EXT.test(entry.name) && !entry.name.endsWith('.d.ts')) files.set(path, readFileSync(join(root, path), 'utf8'));
    }
  };
  SCAN_ROOTS.filter((dir) => existsSync(join(root, dir))).forEach(walk);
  return files;
}

/** The modules loaded from outside: the build's entry points (scripts/*.mjs) and web/index.html's script. */
function entryPoints(root, files) {
  const entries = new Set();
  for (const script of ['scripts/build.mjs', 'scripts/build-sea.mjs']) {
    const text = files.get(script) ?? '';
    for (const m of text.matchAll(/['"]((?:src|web)\/[\w./-]+\.tsx?)['"]/g)) entries.add(m[1]);
  }
  const html = existsSync(join(root, 'web/index.html')) ? readFileSync(join(root, 'web/index.html'), 'utf8') : '';
  for (const m of html.matchAll(/<script[^>]*src="\/([\w./-]+)"/g)) entries.add(`web/${m[1]}`);
  return [...entries].filter((f) => files.has(f));
}

function main() {
  const started = performance.now();
  const root = join(dirname(fileURLToPath(import.meta.url)), '..');
  const layers = parseLayerTable(readFileSync(join(root, 'README.md'), 'utf8'));
  const files = sourceFiles(root);
  const violations = analyze({ files, layers, entryFiles: entryPoints(root, files) });
  violations.forEach((v) => console.log(formatViolation(v)));
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  if (violations.length === 0) {
    console.log(`architecture: ${files.size} files, ${layers.length} layers: no violations (${seconds} s)`);
    return;
  }
  const perRule = new Map();
  violations.forEach((v) => perRule.set(v.rule, (perRule.get(v.rule) ?? 0) + 1));
  const counts = [...perRule].map(([rule, n]) => `${n} ${rule}`);
  console.log(`architecture: ${violations.length} violations (${counts.join(', ')}) in ${files.size} files (${seconds} s); the layer table is in README.md (## Architecture)`);
  if (!process.argv.includes('--report')) process.exitCode = 1;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) main();
