import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OUTPUT_FILE, processDir, writeMeta, type ProcessMeta } from './meta.js';
import { OutputLog } from './output-log.js';
import { readRecordedOutput } from './recorded-output.js';

describe('readRecordedOutput', () => {
  let state: string;
  beforeEach(() => {
    state = mkdtempSync(join(tmpdir(), 'recorded-output-'));
  });
  afterEach(() => rmSync(state, { recursive: true, force: true }));

  function record(id: string, texts: string[]): void {
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
  }

  it('reads the recorded chunks of one process from an offset, without touching the files', () => {
    record('agent-1', ['a', '!b', 'c']);
    record('agent-2', ['z']);
    const file = join(processDir(state, 'agent-1'), OUTPUT_FILE);
    const before = readFileSync(file, 'utf8');
    const all = readRecordedOutput(state, 'agent-1');
    expect(all?.chunks.map((c) => [c.seq, c.stream, c.data.toString()])).toEqual([[0, 'stdout', 'a'], [1, 'stderr', '!b'], [2, 'stdout', 'c']]);
    expect(all?.next).toBe(3);
    expect(readRecordedOutput(state, 'agent-1', 2)?.chunks.map((c) => c.data.toString())).toEqual(['c']);
    expect(readRecordedOutput(state, 'agent-1', 9)?.chunks).toEqual([]);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('answers null for unknown or unsafe process ids', () => {
    record('agent-1', ['a']);
    expect(readRecordedOutput(state, 'agent-7')).toBeNull();
    expect(readRecordedOutput(state, '..')).toBeNull();
    expect(readRecordedOutput(state, '../agent-1')).toBeNull();
    expect(readRecordedOutput(join(state, 'missing'), 'agent-1')).toBeNull();
  });
});
