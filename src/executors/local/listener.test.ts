import { describe, expect, it } from 'vitest';
import { loopbackListenerInodes } from './listener.js';

const TABLE = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 0100007F:9C40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 111 1 0000000000000000 100 0 0 10 0',
  '   1: 00000000:9C40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 222 1 0000000000000000 100 0 0 10 0',
  '   2: 0100007F:9C40 0100007F:D431 01 00000000:00000000 00:00000000 00000000     0        0 333 1 0000000000000000 20 4 30 10 -1',
  '   3: 0100007F:9C41 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 444 1 0000000000000000 100 0 0 10 0',
  '   4: 7F000001:9C40 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 555 1 0000000000000000 100 0 0 10 0',
  '   5: garbage',
  '',
].join('\n');

describe('loopbackListenerInodes', () => {
  it('finds the listening sockets on 127.0.0.1:port only (not other ports, states or addresses)', () => {
    expect(loopbackListenerInodes(TABLE, 0x9c40)).toEqual(['111', '555']);
    expect(loopbackListenerInodes(TABLE, 0x9c41)).toEqual(['444']);
    expect(loopbackListenerInodes(TABLE, 1)).toEqual([]);
  });

  it('reads nothing from an empty or malformed table', () => {
    expect(loopbackListenerInodes('', 0x9c40)).toEqual([]);
    expect(loopbackListenerInodes('header\nnot a row at all\n', 0x9c40)).toEqual([]);
  });
});
