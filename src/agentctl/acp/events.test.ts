import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AcpEventSchema, type AcpEvent } from '../../protocol/index.js';
import { decodeEvent, encodeEvent, EventLog } from './events.js';
import { sliceLines } from './fs.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const EVENTS: AcpEvent[] = [
  { type: 'session', session_id: 's1', agent: { name: 'demo', version: '1' } },
  { type: 'prompt', turn: 1, text: 'write a.md' },
  { type: 'update', turn: 1, update: { sessionUpdate: 'agent_message_chunk', content: { type: 'text', text: 'hi' } } },
  { type: 'turn_end', turn: 1, stop_reason: 'end_turn', usage: null },
];

describe('ACP events', () => {
  it('encode to JSON that decodes to the same, schema-valid event', () => {
    for (const [seq, event] of EVENTS.entries()) {
      const decoded = decodeEvent({ seq, stream: 'stdout', at: 'T', data: encodeEvent(event) });
      expect(decoded).toEqual({ seq, at: 'T', event });
      expect(AcpEventSchema.parse(decoded?.event)).toEqual(event);
    }
    expect(decodeEvent({ seq: 0, stream: 'stdout', at: 'T', data: Buffer.from('not json') })).toBeNull();
    expect(decodeEvent({ seq: 0, stream: 'stdout', at: 'T', data: Buffer.from('[1]') })).toBeNull();
  });

  it('are numbered in append order, paged from a sequence number and read back from disk', () => {
    const dir = mkdtempSync(join(tmpdir(), 'acp-events-'));
    dirs.push(dir);
    const path = join(dir, 'events.jsonl');
    const log = EventLog.open(path, 1024 * 1024);
    for (const event of EVENTS) log.append(event);
    expect(log.page(0, 100, false)).toMatchObject({ next: 4, first_available: 0, complete: false });
    expect(log.page(2, 1, false).events.map((e) => e.event)).toEqual([EVENTS[2]]);
    log.close();
    const loaded = EventLog.load(path, 1024 * 1024);
    const page = loaded.page(1, 100, true);
    expect(page.events.map((e) => [e.seq, e.event])).toEqual(EVENTS.slice(1).map((e, i) => [i + 1, e]));
    expect(page.complete).toBe(true);
    expect(loaded.page(0, 2, true).complete).toBe(false);
  });

  it('fs reads slice lines 1-based with an optional limit', () => {
    expect(sliceLines('a\nb\nc\n', 2, null)).toBe('b\nc\n');
    expect(sliceLines('a\nb\nc', 1, 2)).toBe('a\nb\n');
    expect(sliceLines('a\nb\nc', 3, 5)).toBe('c');
    expect(sliceLines('a\n', 5, null)).toBe('');
  });
});
