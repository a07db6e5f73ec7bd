import { execFileSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OUTPUT_FILE, processDir, writeMeta, type ProcessMeta } from './meta.js';
import { OutputLog } from './output-log.js';
import { MAX_OUTPUT_FILE_READ, readRecordedOutput, UnsafeFileError } from './recorded-output.js';

describe('readRecordedOutput', () => {
  let root: string;
  let state: string;
  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'recorded-output-'));
    state = join(root, 's-1', 'agentctl-state', 'i-1');
    mkdirSync(state, { recursive: true });
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  function record(id: string, texts: string[]): string {
    const dir = processDir(state, id);
    const meta: ProcessMeta = {
      id, kind: 'agent', command: ['x'], cwd: '/', status: 'exited', pid: null, proc_start: null, exit_code: 0, signal: null,
      started_at: new Date().toISOString(), ended_at: new Date().toISOString(), next_seq: 0, orphaned: false,
    };
    writeMeta(dir, meta);
    const log = OutputLog.open(join(dir, OUTPUT_FILE), 1024);
    for (const t of texts) log.append(t.startsWith('!') ? 'stderr' : 'stdout', Buffer.from(t));
    log.close();
    writeMeta(dir, { ...meta, next_seq: log.nextSeq });
    return join(dir, OUTPUT_FILE);
  }
  const read = (id: string, from?: number) => readRecordedOutput(root, state, id, from);
  const texts = async (id: string, from?: number) => (await read(id, from))?.chunks.map((c) => c.data.toString());

  it('reads the recorded chunks of one process from an offset, without touching the files', async () => {
    const file = record('agent-1', ['a', '!b', 'c']);
    record('agent-2', ['z']);
    const before = readFileSync(file, 'utf8');
    const all = await read('agent-1');
    expect(all?.chunks.map((c) => [c.seq, c.stream, c.data.toString()])).toEqual([[0, 'stdout', 'a'], [1, 'stderr', '!b'], [2, 'stdout', 'c']]);
    expect(all?.next).toBe(3);
    expect(await texts('agent-1', 2)).toEqual(['c']);
    expect(await texts('agent-1', 9)).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('answers null for unknown or unsafe process ids', async () => {
    record('agent-1', ['a']);
    expect(await read('agent-7')).toBeNull();
    expect(await read('..')).toBeNull();
    expect(await read('../agent-1')).toBeNull();
    expect(await readRecordedOutput(root, join(root, 'missing'), 'agent-1')).toBeNull();
  });

  it.each([
    ['a FIFO', (file: string) => execFileSync('mkfifo', [file]), 'is not a regular file (a FIFO)'],
    ['a link to /dev/zero', (file: string) => symlinkSync('/dev/zero', file), 'is a symbolic link'],
    ['a directory', (file: string) => mkdirSync(file), 'is not a regular file (a directory)'],
  ])('refuses an output file the agent replaced with %s, naming it', async (_what, replace, reason) => {
    const file = record('agent-1', ['a']);
    unlinkSync(file);
    replace(file);
    const err = await read('agent-1').then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(UnsafeFileError);
    expect((err as Error).message).toBe(`${file} ${reason}; not read`);
  });

  it('refuses a meta.json that is a link, and a process dir swapped for a link to another one', async () => {
    record('agent-1', ['a']);
    const meta = join(processDir(state, 'agent-1'), 'meta.json');
    renameSync(meta, `${meta}.real`);
    symlinkSync(`${meta}.real`, meta);
    await expect(read('agent-1')).rejects.toThrow(`${meta} is a symbolic link; not read`);
    record('agent-2', ['secret of another run']);
    symlinkSync(processDir(state, 'agent-2'), processDir(state, 'agent-3'));
    await expect(read('agent-3')).rejects.toThrow(`${processDir(state, 'agent-3')} is a symbolic link; not read`);
  });

  it('reads only the tail of a huge (2 GB sparse) output file: the newest lines, nothing more', async () => {
    const file = record('agent-1', ['old']);
    truncateSync(file, 2 * 1024 ** 3);
    const line = (seq: number, text: string) => `${JSON.stringify({ s: seq, t: 'o', a: new Date().toISOString(), d: Buffer.from(text).toString('base64') })}\n`;
    appendFileSync(file, `\n${line(5, 'newest')}`);
    const out = await read('agent-1');
    expect(out?.chunks.map((c) => [c.seq, c.data.toString()])).toEqual([[5, 'newest']]);
    expect(MAX_OUTPUT_FILE_READ).toBeLessThanOrEqual(64 * 1024 * 1024);
  });

  it('drops the first, cut line of a tail read', async () => {
    const file = record('agent-1', []);
    const line = (seq: number, text: string) => `${JSON.stringify({ s: seq, t: 'o', a: '2026-01-01T00:00:00.000Z', d: Buffer.from(text).toString('base64') })}\n`;
    const big = 'x'.repeat(1024 * 1024);
    writeFileSync(file, '');
    // just over the read cap: the read starts inside the first line, which must not be half-parsed
    let seq = 0;
    for (let size = 0; size <= MAX_OUTPUT_FILE_READ; seq++) {
      const text = line(seq, big);
      appendFileSync(file, text);
      size += text.length;
    }
    const out = await read('agent-1');
    expect(out?.chunks[0]?.seq).toBeGreaterThan(0);
    expect(out?.chunks.at(-1)?.seq).toBe(seq - 1);
    expect(out?.chunks.every((c) => c.data.length === big.length)).toBe(true);
  });
});
