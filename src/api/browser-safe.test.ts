import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// `tsc -p src/api/tsconfig.browser.json` (in `npm run typecheck`) compiles src/api without Node
// types, so a `node:` import or a Node global there fails it. What the compiler cannot tell: an npm
// package whose typings reference Node's (ws, pino …) brings them into that program, and then
// everything compiles. This checks that no file of the program does.

const CONFIG = fileURLToPath(new URL('./tsconfig.browser.json', import.meta.url));

function browserProgram(): ts.Program {
  const host = {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d: ts.Diagnostic) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  };
  const parsed = ts.getParsedCommandLineOfConfigFile(CONFIG, {}, host);
  if (!parsed) throw new Error(`cannot read ${CONFIG}`);
  return ts.createProgram({ rootNames: parsed.fileNames, options: parsed.options });
}

/** Node's own typings (and the fetch typings they bring). */
const NODE_TYPINGS = /\/node_modules\/(@types\/node|undici-types)\//;

/** Files that pull Node's typings in: a `/// <reference types="node" />` or an import of a Node module. */
function nodeTypingSources(program: ts.Program): string[] {
  return program
    .getSourceFiles()
    .filter((sf) => !NODE_TYPINGS.test(sf.fileName))
    .filter((sf) => sf.typeReferenceDirectives.some((d) => d.fileName === 'node') || ts.preProcessFile(sf.text).importedFiles.some((f) => f.fileName.startsWith('node:')))
    .map((sf) => sf.fileName);
}

describe('src/api browser build', () => {
  it('includes the whole module and loads no Node typings', { timeout: 30_000 }, () => {
    const program = browserProgram();
    const files = program.getSourceFiles().map((sf) => sf.fileName);
    expect(files.some((f) => f.endsWith('/src/api/index.ts'))).toBe(true);
    expect(nodeTypingSources(program)).toEqual([]);
    expect(files.filter((f) => NODE_TYPINGS.test(f))).toEqual([]);
  });
});
