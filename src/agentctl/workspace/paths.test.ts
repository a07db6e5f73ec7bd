import { describe, expect, it } from 'vitest';
import { isInside, lexicalResolve, workspaceRelative } from './paths.js';
import { HttpError } from '../../shared/http/index.js';

const ROOT = '/real/ws';
const DECLARED = '/link/ws';

function code(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    return err instanceof HttpError ? err.code : 'other';
  }
}

describe('isInside', () => {
  it.each([
    ['/a/b', '/a/b', true],
    ['/a/b', '/a/b/c', true],
    ['/a/b', '/a/bc', false],
    ['/a/b', '/a', false],
    ['/', '/anything', true],
  ])('isInside(%s, %s) is %s', (root, candidate, expected) => {
    expect(isInside(root, candidate)).toBe(expected);
  });
});

describe('lexicalResolve', () => {
  it.each([
    ['src/a.ts', '/real/ws/src/a.ts'],
    ['.', '/real/ws'],
    ['./x/../y', '/real/ws/y'],
    ['/real/ws/z', '/real/ws/z'],
    ['/link/ws/z', '/real/ws/z'],
  ])('resolves %s inside the workspace to %s', (input, expected) => {
    expect(lexicalResolve(ROOT, DECLARED, input)).toBe(expected);
  });

  it.each([
    ['..', 'path_escape'],
    ['../ws2/file', 'path_escape'],
    ['a/../../etc/passwd', 'path_escape'],
    ['/etc/passwd', 'path_escape'],
    ['/real/ws2', 'path_escape'],
    ['a\0b', 'bad_request'],
    ['', 'bad_request'],
  ])('rejects %j with %s', (input, expected) => {
    expect(code(() => lexicalResolve(ROOT, DECLARED, input))).toBe(expected);
  });
});

describe('workspaceRelative', () => {
  it('uses "." for the root and "/" separators below it', () => {
    expect(workspaceRelative(ROOT, ROOT)).toBe('.');
    expect(workspaceRelative(ROOT, '/real/ws/a/b')).toBe('a/b');
  });
});
