import { mkdtempSync, rmSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OutputLog } from './output-log.js';

describe('OutputLog', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'output-log-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('numbers chunks and pages from an offset', () => {
    const log = OutputLog.open(join(dir, 'out.jsonl'), 1024);
    for (const text of ['a', 'b', 'c']) log.append('stdout', Buffer.from(text));
    const page = log.page(1, 10);
    expect(page.chunks.map((c) => c.data.toString())).toEqual(['b', 'c']);
    expect(page.next).toBe(3);
    expect(log.page(1, 1).next).toBe(2);
    expect(log.page(3, 10)).toEqual({ chunks: [], next: 3, firstAvailable: 0 });
    log.close();
  });

  it('drops the oldest chunks past the byte cap and advances first_available', () => {
    const log = OutputLog.open(join(dir, 'out.jsonl'), 1024);
    for (let i = 0; i < 10; i++) log.append('stderr', Buffer.alloc(300, i));
    expect(log.firstAvailable).toBe(7);
    expect(log.nextSeq).toBe(10);
    const page = log.page(0, 100);
    expect(page.chunks.map((c) => c.seq)).toEqual([7, 8, 9]);
    log.close();
  });

  it('reloads from disk with sequence numbers intact, ignoring a torn last line', () => {
    const path = join(dir, 'out.jsonl');
    const first = OutputLog.open(path, 1024);
    first.append('stdout', Buffer.from('one'));
    first.append('stderr', Buffer.from([0, 255, 10]));
    first.close();
    appendFileSync(path, '{"s":2,"t":"o","a":"x","d":"AA');
    const again = OutputLog.open(path, 1024);
    expect(again.nextSeq).toBe(2);
    expect(again.page(1, 10).chunks[0]?.data).toEqual(Buffer.from([0, 255, 10]));
    again.append('stdout', Buffer.from('three'));
    again.close();
    expect(OutputLog.open(path, 1024).page(0, 10).chunks.map((c) => c.seq)).toEqual([0, 1, 2]);
  });

  it('keeps every chunk on reload and takes a larger next sequence from the metadata', () => {
    const path = join(dir, 'out.jsonl');
    const first = OutputLog.open(path, 1024);
    first.append('stdout', Buffer.from('a'));
    first.append('stdout', Buffer.from('b'));
    first.close();
    const same = OutputLog.open(path, 1024, 2);
    expect(same.page(0, 10).chunks.map((c) => c.data.toString())).toEqual(['a', 'b']);
    same.close();
    const ahead = OutputLog.open(path, 1024, 5);
    expect(ahead.nextSeq).toBe(5);
    expect(ahead.firstAvailable).toBe(0);
    ahead.close();
    const empty = OutputLog.open(join(dir, 'none.jsonl'), 1024, 3);
    expect([empty.nextSeq, empty.firstAvailable]).toEqual([3, 3]);
    expect(empty.page(0, 10)).toEqual({ chunks: [], next: 3, firstAvailable: 3 });
    empty.close();
  });
});
