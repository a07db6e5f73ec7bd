import { describe, expect, it } from 'vitest';
import { defaultBlockAddress } from './address.js';
import { MAX_USAGE_BYTES, usageReader, type TokenUsage } from './usage.js';

/** Feeds `body` in pieces of `size` bytes (splitting keys, numbers and UTF-8 sequences). */
function read(contentType: string, body: string, size = 7, encoding?: string): TokenUsage {
  const reader = usageReader(contentType, encoding);
  const bytes = Buffer.from(body);
  for (let i = 0; i < bytes.length; i += size) reader.push(bytes.subarray(i, i + size));
  return reader.result();
}

const sse = (events: unknown[]): string => events.map((e) => `event: x\ndata: ${typeof e === 'string' ? e : JSON.stringify(e)}\n\n`).join('');

describe('usage from JSON bodies', () => {
  it('reads Anthropic, OpenAI chat and Responses API usage, whatever the chunking', () => {
    const anthropic = JSON.stringify({ id: 'm', content: [{ type: 'text', text: 'a "usage": {"input_tokens": 999} ü €' }], usage: { input_tokens: 12, output_tokens: 34, cache_read_input_tokens: 0 } });
    for (const size of [1, 3, 7, 1000]) expect(read('application/json', anthropic, size)).toEqual({ inputTokens: 12, outputTokens: 34 });
    const chat = JSON.stringify({ choices: [{ message: { content: 'x' } }], usage: { prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 } });
    expect(read('application/json; charset=utf-8', chat)).toEqual({ inputTokens: 5, outputTokens: 6 });
    const responses = JSON.stringify({ output: [{ content: [{ usage: { input_tokens: 1 } }] }], usage: { input_tokens: 7, output_tokens: 8 } });
    expect(read('application/json', responses)).toEqual({ inputTokens: 7, outputTokens: 8 });
  });

  it('ignores usage objects in other places, in strings, and keys that only look alike', () => {
    const body = JSON.stringify({ data: { usage: { input_tokens: 1, output_tokens: 2 } }, list: [{ usage: { input_tokens: 3 } }], note: '{"usage":{"input_tokens":4}}', usagex: { input_tokens: 5 } });
    expect(read('application/json', body)).toEqual({ inputTokens: null, outputTokens: null });
  });

  it('gives nulls for no usage, a null usage, bad counts, an oversized usage, other types and compressed bodies', () => {
    const nulls = { inputTokens: null, outputTokens: null };
    expect(read('application/json', '{"id":"x"}')).toEqual(nulls);
    expect(read('application/json', '{"usage":null}')).toEqual(nulls);
    expect(read('application/json', '{"usage":{"input_tokens":-1,"output_tokens":1.5}}')).toEqual(nulls);
    expect(read('application/json', `{"usage":{"input_tokens":1,"pad":"${'x'.repeat(MAX_USAGE_BYTES)}"}}`)).toEqual(nulls);
    expect(read('text/plain', '{"usage":{"input_tokens":1}}')).toEqual(nulls);
    expect(read('application/json', '{"usage":{"input_tokens":1}}', 7, 'gzip')).toEqual(nulls);
    expect(read('application/json', 'not json {"usage": {"input_tokens": 1')).toEqual(nulls);
  });
});

describe('usage from server-sent events', () => {
  it('reads Anthropic message_start and message_delta (the last output count wins)', () => {
    const body = sse([
      { type: 'message_start', message: { id: 'm', usage: { input_tokens: 25, output_tokens: 1 } } },
      { type: 'content_block_delta', delta: { type: 'text_delta', text: '"usage":{"output_tokens":77}' } },
      { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 15 } },
      { type: 'message_stop' },
    ]);
    for (const size of [1, 5, 64, 10_000]) expect(read('text/event-stream', body, size)).toEqual({ inputTokens: 25, outputTokens: 15 });
    expect(read('text/event-stream', body.replaceAll('\n', '\r\n'), 3)).toEqual({ inputTokens: 25, outputTokens: 15 });
  });

  it('reads the final OpenAI chat chunk and the Responses API response.completed', () => {
    const chat = sse([{ choices: [{ delta: { content: 'hi' } }], usage: null }, { choices: [], usage: { prompt_tokens: 9, completion_tokens: 4 } }, '[DONE]']);
    expect(read('text/event-stream', chat)).toEqual({ inputTokens: 9, outputTokens: 4 });
    const responses = sse([{ type: 'response.created', response: { usage: null } }, { type: 'response.completed', response: { output: [{ text: 'x'.repeat(100_000) }], usage: { input_tokens: 3, output_tokens: 2 } } }]);
    expect(read('text/event-stream', responses, 4096)).toEqual({ inputTokens: 3, outputTokens: 2 });
  });

  it('ignores other fields and comments, and joins data lines of one event', () => {
    const body = ': comment {"usage":{"input_tokens":1}}\nid: {"usage":{"input_tokens":2}}\ndata: {"usage":\ndata: {"input_tokens":6,"output_tokens":7}}\n\n';
    expect(read('text/event-stream', body, 2)).toEqual({ inputTokens: 6, outputTokens: 7 });
  });
});

describe('the default blocked addresses', () => {
  it('blocks metadata, link-local, loopback, unspecified and multicast, in every spelling', () => {
    for (const ip of ['169.254.169.254', '169.254.0.1', '127.0.0.1', '127.255.0.9', '0.0.0.0', '0.1.2.3', '224.0.0.1', '239.1.1.1', '255.255.255.255',
      '::1', '::', 'fe80::1', 'fe80::1%eth0', 'febf::1', 'fd00:ec2::254', 'FD00:EC2:0:0:0:0:0:254', 'ff02::1', '::ffff:169.254.169.254', '::ffff:7f00:1', '0:0:0:0:0:0:0:1', 'not-an-ip']) {
      expect(defaultBlockAddress(ip), ip).toBe(true);
    }
  });
  it('lets public and private (cluster) addresses through', () => {
    for (const ip of ['10.0.0.1', '172.16.5.4', '192.168.1.1', '8.8.8.8', '100.64.0.1', '169.253.0.1', '2001:db8::1', 'fd00::1', 'fd00:ec2::253', 'fec0::1', '::ffff:10.0.0.1', '2606:4700::1111']) {
      expect(defaultBlockAddress(ip), ip).toBe(false);
    }
  });
});
