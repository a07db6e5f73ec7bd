import { existsSync, lstatSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentctlProcess, cleanup, createInstance, tempDir, type InstanceApi } from '../support/agentctl.js';

const ws = tempDir();
const outside = tempDir('agentctl-outside-');
let api: InstanceApi;

beforeAll(async () => {
  writeFileSync(join(outside, 'secret.txt'), 'top secret');
  mkdirSync(join(ws, 'sub/deeper'), { recursive: true });
  writeFileSync(join(ws, 'sub/inside.txt'), 'inside');
  symlinkSync(outside, join(ws, 'link-out'));
  symlinkSync(join(outside, 'secret.txt'), join(ws, 'file-out'));
  symlinkSync(join(ws, 'sub'), join(ws, 'link-in'));
  symlinkSync(join('../../..', basename(outside)), join(ws, 'sub/deeper/up-out'));
  const agentctl = await AgentctlProcess.start();
  api = await createInstance(agentctl, await agentctl.handshake(), 'files', ws);
});
afterAll(() => cleanup(ws, outside));

const q = encodeURIComponent;
const read = (path: string) => api.request<{ path: string; size: number; content: string }>('GET', `/api/v1/files/content?path=${q(path)}`);
const write = (body: Record<string, unknown>) => api.request<{ path: string; size: number }>('PUT', '/api/v1/files/content', { body });
const del = (path: string, recursive = false) => api.request('DELETE', `/api/v1/files/content?path=${q(path)}${recursive ? '&recursive=true' : ''}`);

describe('agentctl files - confinement', () => {
  const escapes: Array<[string, () => string]> = [
    ['a parent path', () => '../secret.txt'],
    ['a deep parent path', () => 'sub/../../x'],
    ['an absolute path outside', () => '/etc/passwd'],
    ['the outside dir by absolute path', () => join(outside, 'secret.txt')],
    ['a symlinked directory pointing outside', () => 'link-out/secret.txt'],
    ['a symlinked file pointing outside', () => 'file-out'],
    ['a relative symlink climbing out', () => 'sub/deeper/up-out/secret.txt'],
  ];

  it.each(escapes)('refuses to read through %s', async (_what, path) => {
    const res = await read(path());
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'path_escape' } });
    expect(JSON.stringify(res.body)).not.toContain('top secret');
  });

  it.each([
    ['through a symlinked directory', 'link-out/new.txt'],
    ['into a new directory below a symlink', 'link-out/newdir/x.txt'],
    ['into a parent path', '../evil.txt'],
    ['to an absolute path outside', () => join(outside, 'evil.txt')],
  ])('refuses to write %s', async (_what, path) => {
    const target = typeof path === 'function' ? path() : path;
    const res = await write({ path: target, content: 'pwned' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'path_escape' } });
    expect(existsSync(join(outside, 'new.txt'))).toBe(false);
    expect(existsSync(join(outside, 'newdir'))).toBe(false);
    expect(existsSync(join(outside, 'evil.txt'))).toBe(false);
  });

  it.each([
    ['through a symlinked directory', 'link-out/secret.txt'],
    ['a parent path', '..'],
    ['an absolute path outside', '/tmp'],
  ])('refuses to delete %s', async (_what, path) => {
    const res = await del(path, true);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'path_escape' } });
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it('refuses to list a directory outside through a symlink', async () => {
    const res = await api.request('GET', `/api/v1/files/tree?path=link-out`);
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'path_escape' } });
  });

  it('follows symlinks that stay inside and accepts absolute paths inside', async () => {
    expect(Buffer.from((await read('link-in/inside.txt')).body.content, 'base64').toString()).toBe('inside');
    expect((await read(join(ws, 'sub/inside.txt'))).status).toBe(200);
  });

  it('writes and deletes through a symlinked directory that stays inside (resolved step by step)', async () => {
    const res = await write({ path: 'link-in/via-link.txt', content: 'through the link' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(readFileSync(join(ws, 'sub/via-link.txt'), 'utf8')).toBe('through the link');
    expect((await del('link-in/via-link.txt')).status).toBe(204);
    expect(existsSync(join(ws, 'sub/via-link.txt'))).toBe(false);
  });

  it('replaces a final symlink instead of writing through it', async () => {
    symlinkSync(join(outside, 'secret.txt'), join(ws, 'replace-me'));
    const res = await write({ path: 'replace-me', content: 'mine' });
    expect(res.status).toBe(200);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
    expect(lstatSync(join(ws, 'replace-me')).isFile()).toBe(true);
  });

  it('deletes a symlink itself, never its target', async () => {
    symlinkSync(outside, join(ws, 'drop-me'));
    expect((await del('drop-me', true)).status).toBe(204);
    expect(existsSync(join(ws, 'drop-me'))).toBe(false);
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('top secret');
  });

  it('refuses to delete the workspace root', async () => {
    for (const path of ['.', ws, 'sub/..']) {
      const res = await del(path, true);
      expect(res.status, path).toBe(400);
    }
    expect(existsSync(ws)).toBe(true);
  });
});

describe('agentctl files - operations', () => {
  it('writes and reads binary content byte for byte', async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    const res = await write({ path: 'bin/data.bin', content: bytes.toString('base64'), encoding: 'base64' });
    expect(res.body).toEqual({ path: 'bin/data.bin', size: 256 });
    const back = await read('bin/data.bin');
    expect(back.body).toMatchObject({ path: 'bin/data.bin', size: 256, encoding: 'base64' });
    expect(Buffer.from(back.body.content, 'base64').equals(bytes)).toBe(true);
  });

  it('applies the requested mode and leaves no temp files behind', async () => {
    await write({ path: 'script.sh', content: '#!/bin/sh\n', mode: 0o750 });
    expect(statSync(join(ws, 'script.sh')).mode & 0o777).toBe(0o750);
    await write({ path: 'script.sh', content: '#!/bin/sh\necho 2\n' });
    expect(statSync(join(ws, 'script.sh')).mode & 0o777, 'an overwrite keeps the mode').toBe(0o750);
    const tree = await api.request<{ entries: Array<{ path: string }> }>('GET', '/api/v1/files/tree');
    expect(tree.body.entries.filter((e) => e.path.endsWith('.tmp'))).toEqual([]);
  });

  it('refuses a write into a missing directory when mkdirs is false', async () => {
    const res = await write({ path: 'nope/x.txt', content: 'x', mkdirs: false });
    expect(res.status).toBe(404);
  });

  it('lists a tree to the requested depth without following symlinks', async () => {
    const res = await api.request<{ entries: Array<{ path: string; type: string }>; truncated: boolean }>('GET', '/api/v1/files/tree?path=.&depth=2');
    const byPath = new Map(res.body.entries.map((e) => [e.path, e.type]));
    expect(byPath.get('sub')).toBe('dir');
    expect(byPath.get('sub/inside.txt')).toBe('file');
    expect(byPath.get('link-out')).toBe('symlink');
    expect(byPath.has('link-out/secret.txt')).toBe(false);
    expect(byPath.has('sub/deeper/up-out'), 'depth 2 stops above level 3').toBe(false);
    expect(res.body.truncated).toBe(false);
    expect((await api.request('GET', '/api/v1/files/tree?depth=0')).status).toBe(400);
    expect((await api.request('GET', '/api/v1/files/tree?path=sub/inside.txt')).status).toBe(400);
  });

  it('answers 404 for a missing file, 400 for a directory and 413 for a file over the read cap', async () => {
    expect((await read('missing.txt')).status).toBe(404);
    expect((await read('sub')).body).toMatchObject({ error: { code: 'not_a_file' } });
    writeFileSync(join(ws, 'big.bin'), Buffer.alloc(8 * 1024 * 1024 + 1));
    const big = await read('big.bin');
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ error: { code: 'file_too_large' } });
  });

  it('deletes files, and directories only with recursive=true', async () => {
    await write({ path: 'trash/a/b.txt', content: 'x' });
    const notRecursive = await del('trash');
    expect(notRecursive.status).toBe(400);
    expect(existsSync(join(ws, 'trash/a/b.txt'))).toBe(true);
    expect((await del('trash', true)).status).toBe(204);
    expect(existsSync(join(ws, 'trash'))).toBe(false);
    expect((await del('trash')).status).toBe(404);
  });
});

describe('agentctl files - review fixes', () => {
  it('leaves its own state directory .agentctl out of the root listing, while it stays readable by path', async () => {
    expect(existsSync(join(ws, '.agentctl')), 'creating the instance made the state directory').toBe(true);
    const tree = await api.request<{ entries: Array<{ path: string }> }>('GET', '/api/v1/files/tree?depth=3');
    expect(tree.body.entries.filter((e) => e.path === '.agentctl' || e.path.startsWith('.agentctl/'))).toEqual([]);
    expect((await read('.agentctl/.gitignore')).status).toBe(200);
  });

  it('answers 400 not_a_directory, not a 500, for a write below a regular file', async () => {
    writeFileSync(join(ws, 'plain.txt'), 'p');
    const res = await write({ path: 'plain.txt/child.txt', content: 'x' });
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ error: { code: 'not_a_directory' } });
  });
});
