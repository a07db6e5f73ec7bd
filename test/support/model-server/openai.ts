/**
 * The OpenAI Responses API as Codex uses it: `POST /v1/responses` streaming SSE (a message, a
 * `function_call` such as `exec_command`, or a `custom_tool_call` for a custom tool such as
 * `apply_patch`), `GET /v1/models` (an empty list), anything else 404. Main requests (they offer
 * tools) follow the script; the rest get a short text.
 * @module
 */
import { DEFAULT_REPLY_TEXT, sseEvent, toolInput, type RecordedRequest, type Reply, type RequestKind } from './core.js';
import type { ApiResponse } from './server.js';

interface ResponsesBody {
  model?: string;
  tools?: { type?: string; name?: string }[];
  input?: { type?: string; role?: string }[];
}

/** Whether a request is the main conversation, and whether it starts a turn (its last input is the user's message). */
export function classifyResponses(method: string, path: string, body: unknown): { kind: RequestKind; startsTurn: boolean } {
  if (method !== 'POST' || !/^\/(v1\/)?responses(\?|$)/.test(path)) return { kind: 'other', startsTurn: false };
  const b = (body ?? {}) as ResponsesBody;
  if ((b.tools ?? []).length === 0) return { kind: 'side', startsTurn: false };
  const last = b.input?.at(-1);
  const startsTurn = last !== undefined && (last.type === undefined || last.type === 'message') && last.role === 'user';
  return { kind: 'main', startsTurn };
}

/** The output of the tool calls the request's input ends with (what the tools printed), or null. */
export function responsesToolResult(request: RecordedRequest): string | null {
  const input = ((request.body ?? {}) as { input?: { type?: string; output?: unknown }[] }).input ?? [];
  const outputs = input.filter((i) => /_call_output$/.test(i.type ?? '')).map((i) => (typeof i.output === 'string' ? i.output : JSON.stringify(i.output)));
  return outputs.length === 0 ? null : outputs.join('\n');
}

type OutputItem = Record<string, unknown> & { type: string; id: string };

function itemOf(reply: Reply, request: RecordedRequest, n: number): OutputItem {
  if ('text' in reply) {
    return { type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: reply.text, annotations: [] }] };
  }
  const input = toolInput(reply, request);
  const tool = ((request.body as ResponsesBody | undefined)?.tools ?? []).find((t) => t.name === reply.tool);
  if (tool?.type === 'custom') {
    // a custom tool takes free text: the script gives it as { input: "…" }
    const text = typeof input.input === 'string' ? input.input : JSON.stringify(input);
    return { type: 'custom_tool_call', id: `ctc_${n}`, call_id: `call_${n}`, name: reply.tool, input: text, status: 'completed' };
  }
  return { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: reply.tool, arguments: JSON.stringify(input), status: 'completed' };
}

/** The SSE body of one response holding `item`. */
export function responseStream(id: string, model: string, item: OutputItem): string {
  const events = [sseEvent('response.created', { type: 'response.created', response: { id, object: 'response', model, status: 'in_progress', output: [] } })];
  if (item.type === 'message') {
    const text = (item.content as { text: string }[])[0]?.text ?? '';
    events.push(
      sseEvent('response.output_item.added', { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } }),
      sseEvent('response.output_text.delta', { type: 'response.output_text.delta', output_index: 0, content_index: 0, item_id: item.id, delta: text }),
    );
  } else {
    events.push(sseEvent('response.output_item.added', { type: 'response.output_item.added', output_index: 0, item }));
  }
  events.push(
    sseEvent('response.output_item.done', { type: 'response.output_item.done', output_index: 0, item }),
    sseEvent('response.completed', {
      type: 'response.completed',
      response: {
        id,
        object: 'response',
        model,
        status: 'completed',
        output: [item],
        usage: { input_tokens: 100, input_tokens_details: { cached_tokens: 0 }, output_tokens: 10, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 110 },
      },
    }),
  );
  return events.join('');
}

/** The answer to one request: `reply` is the script's (main requests) or null (the others). */
export function openaiResponse(request: RecordedRequest, reply: Reply | null, n: number): ApiResponse {
  if (request.method === 'GET' && /^\/(v1\/)?models(\?|$)/.test(request.path)) {
    return { status: 200, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ object: 'list', data: [], models: [] }) };
  }
  if (request.kind === 'other') return { status: 404, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ error: { message: `no ${request.method} ${request.path} here`, type: 'not_found' } }) };
  const model = (request.body as ResponsesBody | undefined)?.model ?? 'berth-test-model';
  const item = itemOf(reply ?? { text: DEFAULT_REPLY_TEXT }, request, n);
  return { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, body: responseStream(`resp_${n}`, model, item) };
}
