import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { readFile, rmdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { toHttpError } from './respond.js';

const dir = mkdtempSync(join(tmpdir(), 'respond-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function thrown(fn: () => Promise<unknown>): Promise<unknown> {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('toHttpError', () => {
  it('maps file-system errors a caller can cause to 4xx codes instead of internal', async () => {
    writeFileSync(join(dir, 'file'), 'x');
    const missing = toHttpError(await thrown(() => readFile(join(dir, 'missing'))));
    expect(missing).toMatchObject({ code: 'not_found', status: 404 });
    const notDir = toHttpError(await thrown(() => readFile(join(dir, 'file', 'child'))));
    expect(notDir).toMatchObject({ code: 'not_a_directory', status: 400 });
    const isDir = toHttpError(await thrown(() => readFile(dir)));
    expect(isDir).toMatchObject({ code: 'not_a_file', status: 400 });
    const notEmpty = toHttpError(await thrown(() => rmdir(dir)));
    expect(notEmpty).toMatchObject({ code: 'conflict', status: 409 });
  });

  it('keeps other failures internal (500)', () => {
    expect(toHttpError(new Error('boom'))).toMatchObject({ code: 'internal', status: 500 });
    const io = Object.assign(new Error('EIO: i/o error'), { code: 'EIO', syscall: 'read' });
    expect(toHttpError(io)).toMatchObject({ code: 'internal', status: 500 });
  });
});
