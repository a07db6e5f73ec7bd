/**
 * The pure parts of the scripted model server (test/support/model-server): SSE framing, script
 * stepping, which requests are the main conversation, the replies of each API, and the request
 * log's handling of credentials.
 */
import { describe, expect, it } from 'vitest';
import { anthropicResponse, classifyMessages, claudeWorkingDirectory } from '../support/model-server/anthropic.js';
import { parseSse, RequestLog, ScriptStepper, sseEvent, type RecordedRequest } from '../support/model-server/core.js';
import { classifyResponses, openaiResponse } from '../support/model-server/openai.js';

const request = (over: Partial<RecordedRequest>): RecordedRequest => ({ method: 'POST', path: '/v1/messages?beta=true', headers: {}, body: {}, kind: 'main', ...over });

describe('sseEvent', () => {
  it('frames a named event: event line, data line, blank line', () => {
    expect(sseEvent('message_stop', { type: 'message_stop' })).toBe('event: message_stop\ndata: {"type":"message_stop"}\n\n');
  });

  it('frames an unnamed event and round-trips through parseSse', () => {
    const text = sseEvent(null, { a: 'x\ny' }) + sseEvent('b', [1, 2]);
    expect(text.startsWith('data: {"a":"x\\ny"}\n\n')).toBe(true);
    expect(parseSse(text)).toEqual([
      { event: null, data: { a: 'x\ny' } },
      { event: 'b', data: [1, 2] },
    ]);
  });
});

describe('ScriptStepper', () => {
  it('gives each turn its replies in order, then OK past the end of a turn and of the script', () => {
    const s = new ScriptStepper([[{ tool: 'Write', input: {} }, { text: 'DONE' }], [{ text: 'SECOND' }]]);
    expect(s.next(true)).toMatchObject({ reply: { tool: 'Write' }, turn: 1, index: 0 });
    expect(s.next(false)).toMatchObject({ reply: { text: 'DONE' }, turn: 1, index: 1 });
    expect(s.next(false)).toMatchObject({ reply: { text: 'OK' }, turn: 1, index: 2 });
    expect(s.next(true)).toMatchObject({ reply: { text: 'SECOND' }, turn: 2, index: 0 });
    expect(s.next(true)).toMatchObject({ reply: { text: 'OK' }, turn: 3 });
    expect(s.turnsStarted).toBe(3);
  });

  it('counts a first request that carries a tool result as the start of turn 1', () => {
    expect(new ScriptStepper([[{ text: 'A' }]]).next(false)).toMatchObject({ reply: { text: 'A' }, turn: 1, index: 0 });
  });
});

describe('RequestLog', () => {
  it('records credential headers redacted and compares their values without exposing them', () => {
    const log = new RequestLog();
    const r = log.record('POST', '/v1/responses', { authorization: 'Bearer sk-one', 'content-type': 'application/json' }, { a: 1 }, 'main');
    log.record('POST', '/v1/messages', { 'x-api-key': 'sk-one' }, undefined, 'side');
    expect(r.headers).toEqual({ authorization: '<redacted>', 'content-type': 'application/json' });
    expect(JSON.stringify(log.requests)).not.toContain('sk-one');
    expect(log.credentialsAll('sk-one')).toBe(true);
    expect(log.credentialsAll('sk-two')).toBe(false);
    expect(new RequestLog().credentialsAll('sk-one'), 'no credential at all is no match').toBe(false);
    expect(log.main()).toEqual([r]);
  });
});

describe('the Anthropic Messages API', () => {
  const tools = [{ name: 'Write' }];
  it('tells the main conversation (tools offered) from side requests and count_tokens', () => {
    expect(classifyMessages('/v1/messages?beta=true', { tools, messages: [{ role: 'user', content: 'hi' }] })).toEqual({ kind: 'main', startsTurn: true });
    const afterTool = { tools, messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] }] };
    expect(classifyMessages('/v1/messages', afterTool)).toEqual({ kind: 'main', startsTurn: false });
    expect(classifyMessages('/v1/messages', { messages: [{ role: 'user', content: 'title this' }] }).kind).toBe('side');
    const suggestion = { tools, messages: [{ role: 'user', content: [{ type: 'text', text: 'Reply with ONLY the suggestion, nothing else.' }] }] };
    expect(classifyMessages('/v1/messages', suggestion).kind).toBe('side');
    expect(classifyMessages('/v1/messages/count_tokens', {}).kind).toBe('other');
  });

  it('streams a tool_use block with its input as one input_json_delta, stop_reason tool_use', () => {
    const res = anthropicResponse(request({ body: { stream: true, model: 'm' } }), { tool: 'Write', input: { file_path: '/w/a' } }, 3);
    expect(res.headers['content-type']).toBe('text/event-stream');
    const events = parseSse(res.body);
    expect(events.map((e) => e.event)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(events[1]?.data).toMatchObject({ content_block: { type: 'tool_use', id: 'toolu_3', name: 'Write', input: {} } });
    expect(events[2]?.data).toMatchObject({ delta: { type: 'input_json_delta', partial_json: '{"file_path":"/w/a"}' } });
    expect(events[4]?.data).toMatchObject({ delta: { stop_reason: 'tool_use' } });
  });

  it('answers non-streaming requests with a JSON message, side requests with OK, count_tokens with a count', () => {
    const plain = JSON.parse(anthropicResponse(request({ kind: 'side', body: { model: 'm' } }), null, 1).body) as unknown;
    expect(plain).toMatchObject({ type: 'message', content: [{ type: 'text', text: 'OK' }], stop_reason: 'end_turn' });
    expect(JSON.parse(anthropicResponse(request({ kind: 'other', path: '/v1/messages/count_tokens' }), null, 1).body)).toEqual({ input_tokens: 10 });
    expect(anthropicResponse(request({ kind: 'other', path: '/v1/else' }), null, 1).status).toBe(404);
  });

  it('computes a tool input from the request: the working directory Claude Code states', () => {
    const body = { messages: [{ role: 'system', content: [{ type: 'text', text: 'env:\n - Primary working directory: /ws/repo\n - Is a git repository: true' }] }] };
    expect(claudeWorkingDirectory(request({ body }))).toBe('/ws/repo');
    expect(claudeWorkingDirectory(request({ body: { system: 'Working directory: /x' } }))).toBe('/x');
    expect(claudeWorkingDirectory(request({ body: {} }))).toBeNull();
    const res = anthropicResponse(request({ body: { ...body, stream: true } }), { tool: 'Read', input: (r) => ({ file_path: `${claudeWorkingDirectory(r)}/README.md` }) }, 1);
    expect(parseSse(res.body)[2]?.data).toMatchObject({ delta: { partial_json: '{"file_path":"/ws/repo/README.md"}' } });
  });
});

describe('the OpenAI Responses API', () => {
  const tools = [{ type: 'function', name: 'exec_command' }, { type: 'custom', name: 'apply_patch' }];
  it('tells the main conversation from side requests; a turn starts with a user message', () => {
    expect(classifyResponses('POST', '/v1/responses', { tools, input: [{ type: 'message', role: 'user' }] })).toEqual({ kind: 'main', startsTurn: true });
    expect(classifyResponses('POST', '/v1/responses', { tools, input: [{ type: 'function_call_output' }] })).toEqual({ kind: 'main', startsTurn: false });
    expect(classifyResponses('POST', '/v1/responses', { input: [{ role: 'user' }] }).kind).toBe('side');
    expect(classifyResponses('GET', '/v1/models', undefined).kind).toBe('other');
  });

  it('streams a function_call with JSON arguments, or a custom_tool_call with text input', () => {
    const body = { tools, model: 'm' };
    const fc = parseSse(openaiResponse(request({ path: '/v1/responses', body }), { tool: 'exec_command', input: { cmd: 'ls' } }, 2).body);
    expect(fc.map((e) => e.event)).toEqual(['response.created', 'response.output_item.added', 'response.output_item.done', 'response.completed']);
    expect(fc[2]?.data).toMatchObject({ item: { type: 'function_call', name: 'exec_command', call_id: 'call_2', arguments: '{"cmd":"ls"}' } });
    const ctc = parseSse(openaiResponse(request({ path: '/v1/responses', body }), { tool: 'apply_patch', input: { input: '*** Begin Patch' } }, 3).body);
    expect(ctc[2]?.data).toMatchObject({ item: { type: 'custom_tool_call', name: 'apply_patch', input: '*** Begin Patch' } });
  });

  it('streams text as output_text deltas and completes with usage; lists no models', () => {
    const events = parseSse(openaiResponse(request({ path: '/v1/responses', body: {} }), { text: 'DONE' }, 1).body);
    expect(events.find((e) => e.event === 'response.output_text.delta')?.data).toMatchObject({ delta: 'DONE' });
    expect(events.at(-1)?.data).toMatchObject({ response: { status: 'completed', usage: { total_tokens: 110 } } });
    const models = openaiResponse(request({ method: 'GET', path: '/v1/models', kind: 'other' }), null, 1);
    expect(JSON.parse(models.body)).toMatchObject({ object: 'list', data: [] });
  });
});
