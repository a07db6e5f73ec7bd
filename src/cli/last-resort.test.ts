import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import { installLastResort, survivable } from './last-resort.js';

const coded = (code: string): Error => Object.assign(new Error(code), { code });

describe('survivable', () => {
  it.each([
    ['a reset peer', coded('ECONNRESET')],
    ['a broken pipe', coded('EPIPE')],
    ['an oversized WebSocket frame', Object.assign(new RangeError('Max payload size exceeded'), { code: 'WS_ERR_UNSUPPORTED_MESSAGE_LENGTH' })],
    ['a bad WebSocket opcode', Object.assign(new RangeError('Invalid WebSocket frame: invalid opcode 5'), { code: 'WS_ERR_INVALID_OPCODE' })],
    ['a write after end', coded('ERR_STREAM_WRITE_AFTER_END')],
  ])('keeps serving after %s', (_what, err) => {
    expect(survivable('uncaughtException', err)).toBe(true);
  });

  it.each([
    ['a TypeError', new TypeError('x is not a function')],
    ['a thrown string', 'boom'],
    ['a file system error', coded('ENOSPC')],
  ])('does not survive %s thrown synchronously', (_what, err) => {
    expect(survivable('uncaughtException', err)).toBe(false);
  });

  it('survives any promise nobody awaited', () => {
    expect(survivable('unhandledRejection', new TypeError('late'))).toBe(true);
  });
});

describe('installLastResort', () => {
  it('logs a connection error and keeps going, ends on anything else, and restores the earlier listeners', () => {
    const proc = new EventEmitter();
    const earlier = (): void => undefined;
    proc.on('unhandledRejection', earlier);
    const logged: string[] = [];
    const fatal: unknown[] = [];
    const log = { warn: (_o: object, m?: string) => void logged.push(`warn ${m}`), error: (_o: object, m?: string) => void logged.push(`error ${m}`) };
    const uninstall = installLastResort(proc, log, (err) => fatal.push(err));
    expect(proc.listeners('unhandledRejection')).not.toContain(earlier);

    proc.emit('uncaughtException', coded('ECONNRESET'));
    proc.emit('unhandledRejection', new Error('nobody awaited'));
    expect(fatal).toEqual([]);
    const bug = new TypeError('bug');
    proc.emit('uncaughtException', bug);
    expect(fatal).toEqual([bug]);
    expect(logged).toEqual(['warn uncaught error (serve keeps running)', 'warn uncaught error (serve keeps running)', 'error uncaught error (serve exits)']);

    uninstall();
    expect(proc.listeners('unhandledRejection')).toEqual([earlier]);
    expect(proc.listenerCount('uncaughtException')).toBe(0);
  });
});

describe('installLastResort logging', () => {
  it('logs an uncaught error without the credentials its message or stack quotes', () => {
    const proc = new EventEmitter();
    const entries: string[] = [];
    const log = { warn: (o: object) => void entries.push(JSON.stringify(o)), error: (o: object) => void entries.push(JSON.stringify(o)) };
    const uninstall = installLastResort(proc, log, () => undefined);
    const token = 'ghp_' + 'A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';
    proc.emit('unhandledRejection', new Error(`clone of https://bot:${token}@example.org/app.git failed`));
    proc.emit('uncaughtException', Object.assign(new Error(`reset while sending ${token}`), { code: 'ECONNRESET' }));
    uninstall();
    expect(entries).toHaveLength(2);
    for (const e of entries) expect(e).not.toContain(token);
    expect(entries[0]).toContain('example.org/app.git');
  });
});
