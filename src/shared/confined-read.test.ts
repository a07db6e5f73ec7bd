import { execFileSync } from 'node:child_process';
import { appendFileSync, closeSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openAppendConfinedSync, readConfinedFile, readConfinedTailSync, UnsafeFileError } from './confined-read.js';

describe('readConfinedFile', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'confined-read-'));
    mkdirSync(join(root, 'a', 'b'), { recursive: true });
    writeFileSync(join(root, 'a', 'b', 'f.txt'), 'hello');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  async function refusal(segments: string[], opts = { maxBytes: 1024 }): Promise<UnsafeFileError> {
    const err = await readConfinedFile(root, segments, opts).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeFileError);
    return err as UnsafeFileError;
  }

  it('reads a regular file, and answers null when any part of the path is missing', async () => {
    const read = await readConfinedFile(root, ['a', 'b', 'f.txt'], { maxBytes: 1024 });
    expect(read?.data.toString()).toBe('hello');
    expect(read).toMatchObject({ start: 0, size: 5 });
    expect(await readConfinedFile(root, ['a', 'b', 'none.txt'], { maxBytes: 1024 })).toBeNull();
    expect(await readConfinedFile(root, ['a', 'nope', 'f.txt'], { maxBytes: 1024 })).toBeNull();
    expect(await readConfinedFile(join(root, 'gone'), ['f.txt'], { maxBytes: 1024 })).toBeNull();
  });

  it('refuses a FIFO at once, naming it (opening one for reading would wait for a writer for ever)', async () => {
    execFileSync('mkfifo', [join(root, 'a', 'b', 'fifo')]);
    const err = await refusal(['a', 'b', 'fifo']);
    expect(err.file).toBe(join(root, 'a', 'b', 'fifo'));
    expect(err.message).toBe(`${join(root, 'a', 'b', 'fifo')} is not a regular file (a FIFO); not read`);
  });

  it('follows no link: not the file itself (to /dev/zero, to a real file) nor a directory on the way', async () => {
    symlinkSync('/dev/zero', join(root, 'a', 'b', 'zero'));
    symlinkSync(join(root, 'a', 'b', 'f.txt'), join(root, 'a', 'b', 'link.txt'));
    symlinkSync(join(root, 'a', 'b'), join(root, 'a', 'c'));
    expect((await refusal(['a', 'b', 'zero'])).message).toBe(`${join(root, 'a', 'b', 'zero')} is a symbolic link; not read`);
    expect((await refusal(['a', 'b', 'link.txt'])).reason).toBe('is a symbolic link');
    expect(await refusal(['a', 'c', 'f.txt'])).toMatchObject({ file: join(root, 'a', 'c') });
  });

  it('refuses a directory as the file and a file as a directory', async () => {
    expect((await refusal(['a', 'b'])).reason).toBe('is not a regular file (a directory)');
    expect(await refusal(['a', 'b', 'f.txt', 'x'])).toMatchObject({ file: join(root, 'a', 'b', 'f.txt'), reason: 'is not a directory' });
  });

  it('reads at most maxBytes: a larger file is refused, or only its tail is read (a 2 GB sparse file in a moment)', async () => {
    expect((await refusal(['a', 'b', 'f.txt'], { maxBytes: 3 })).reason).toBe('is larger than 3 bytes');
    const tail = await readConfinedFile(root, ['a', 'b', 'f.txt'], { maxBytes: 3, tail: true });
    expect(tail).toMatchObject({ start: 2, size: 5 });
    expect(tail?.data.toString()).toBe('llo');
    const sparse = join(root, 'a', 'b', 'sparse');
    writeFileSync(sparse, '');
    truncateSync(sparse, 2 * 1024 ** 3);
    appendFileSync(sparse, 'END');
    const end = await readConfinedFile(root, ['a', 'b', 'sparse'], { maxBytes: 4096, tail: true });
    expect(end?.data.length).toBe(4096);
    expect(end?.data.subarray(-3).toString()).toBe('END');
  });

  it('refuses path segments that are not one plain name', async () => {
    for (const bad of [['..', 'x'], ['a/b'], []]) await expect(readConfinedFile(root, bad, { maxBytes: 1 })).rejects.toThrow(/bad path segments/);
  });
});

describe('readConfinedTailSync', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'confined-tail-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('reads the last bytes of a regular file, and null when there is none', () => {
    writeFileSync(join(root, 'log'), 'one\ntwo\nthree\n');
    expect(readConfinedTailSync(join(root, 'log'), 6)?.toString()).toBe('three\n');
    expect(readConfinedTailSync(join(root, 'none'), 6)).toBeNull();
  });

  it('refuses a FIFO and a link without blocking', () => {
    execFileSync('mkfifo', [join(root, 'fifo')]);
    symlinkSync('/dev/zero', join(root, 'zero'));
    expect(() => readConfinedTailSync(join(root, 'fifo'), 6)).toThrow(`${join(root, 'fifo')} is not a regular file (a FIFO); not read`);
    expect(() => readConfinedTailSync(join(root, 'zero'), 6)).toThrow(`${join(root, 'zero')} is a symbolic link; not read`);
  });
});

describe('openAppendConfinedSync', () => {
  let root: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'confined-append-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('opens (or creates) a regular file for appending, and refuses a FIFO or a link at once', () => {
    const fd = openAppendConfinedSync(join(root, 'log'));
    closeSync(fd);
    execFileSync('mkfifo', [join(root, 'fifo')]);
    symlinkSync(join(root, 'log'), join(root, 'link'));
    expect(() => openAppendConfinedSync(join(root, 'fifo'))).toThrow(UnsafeFileError);
    expect(() => openAppendConfinedSync(join(root, 'link'))).toThrow(`${join(root, 'link')} is a symbolic link; not opened`);
  });
});
