/**
 * The Anthropic Messages API as Claude Code uses it: `POST /v1/messages[?beta=true]` streaming SSE
 * (text and `tool_use` content blocks) or plain JSON, `count_tokens`, and anything else answered
 * harmlessly. Main requests (they offer tools) follow the script; side requests (title generation,
 * the post-turn prompt suggestion, the quota probe: no tools) get a short text.
 * @module
 */
import { DEFAULT_REPLY_TEXT, sseEvent, toolInput, type RecordedRequest, type Reply, type RequestKind } from './core.js';
import type { ApiResponse } from './server.js';

interface MessagesBody {
  model?: string;
  stream?: boolean;
  tools?: { name?: string }[];
  messages?: { role?: string; content?: unknown }[];
  system?: unknown;
}

const SUGGESTION_MARK = 'Reply with ONLY the suggestion';

/** The text of a message's content (a string or an array of blocks). */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((b: { text?: unknown }) => (typeof b.text === 'string' ? b.text : '')).join('\n');
}

function hasToolResult(content: unknown): boolean {
  return Array.isArray(content) && content.some((b: { type?: unknown }) => b.type === 'tool_result');
}

/** Whether a request is the main conversation, and whether it starts a turn (its last message is the user's prompt). */
export function classifyMessages(path: string, body: unknown): { kind: RequestKind; startsTurn: boolean } {
  if (!/^\/v1\/messages(\?|$)/.test(path)) return { kind: 'other', startsTurn: false };
  const b = (body ?? {}) as MessagesBody;
  const last = b.messages?.at(-1);
  const tools = b.tools ?? [];
  const side = tools.length === 0 || contentText(last?.content).includes(SUGGESTION_MARK);
  if (side) return { kind: 'side', startsTurn: false };
  return { kind: 'main', startsTurn: last?.role === 'user' && !hasToolResult(last.content) };
}

/**
 * The working directory Claude Code names in its environment section ("Primary working directory:
 * /…": in `system`, or, as Claude Code 2.1.318 sends it, a `role: system` message), or null.
 */
export function claudeWorkingDirectory(request: RecordedRequest): string | null {
  const b = (request.body ?? {}) as MessagesBody;
  const texts = [typeof b.system === 'string' ? b.system : contentText(b.system), ...(b.messages ?? []).map((m) => contentText(m.content))];
  for (const text of texts) {
    const dir = /(?:Primary working directory|Working directory):\s*(\/\S+)/.exec(text)?.[1];
    if (dir !== undefined) return dir;
  }
  return null;
}

/** The text of the tool results the request's last message carries (what the tools printed), or null. */
export function messagesToolResult(request: RecordedRequest): string | null {
  const content = ((request.body ?? {}) as MessagesBody).messages?.at(-1)?.content;
  if (!Array.isArray(content)) return null;
  const results = content.filter((b: { type?: unknown }) => b.type === 'tool_result') as { content?: unknown }[];
  return results.length === 0 ? null : results.map((r) => (typeof r.content === 'string' ? r.content : contentText(r.content))).join('\n');
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> };

function blockOf(reply: Reply, request: RecordedRequest, n: number): Block {
  return 'text' in reply ? { type: 'text', text: reply.text } : { type: 'tool_use', id: `toolu_${n}`, name: reply.tool, input: toolInput(reply, request) };
}

/** The SSE body of one message holding `block`. */
export function messageStream(id: string, model: string, block: Block): string {
  const stopReason = block.type === 'tool_use' ? 'tool_use' : 'end_turn';
  const events = [
    sseEvent('message_start', { type: 'message_start', message: { id, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 20, output_tokens: 1 } } }),
  ];
  if (block.type === 'text') {
    events.push(
      sseEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
      sseEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: block.text } }),
    );
  } else {
    events.push(
      sseEvent('content_block_start', { type: 'content_block_start', index: 0, content_block: { ...block, input: {} } }),
      sseEvent('content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: JSON.stringify(block.input) } }),
    );
  }
  events.push(
    sseEvent('content_block_stop', { type: 'content_block_stop', index: 0 }),
    sseEvent('message_delta', { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: 10 } }),
    sseEvent('message_stop', { type: 'message_stop' }),
  );
  return events.join('');
}

const json = (status: number, data: unknown): ApiResponse => ({ status, headers: { 'content-type': 'application/json' }, body: JSON.stringify(data) });

/**
 * The answer to one request: `reply` is the script's (main requests) or null (side and other
 * requests); `n` numbers messages and tool calls.
 */
export function anthropicResponse(request: RecordedRequest, reply: Reply | null, n: number): ApiResponse {
  if (request.path.startsWith('/v1/messages/count_tokens')) return json(200, { input_tokens: 10 });
  if (request.kind === 'other') return json(404, { type: 'error', error: { type: 'not_found_error', message: `no ${request.method} ${request.path} here` } });
  const b = (request.body ?? {}) as MessagesBody;
  const model = b.model ?? 'claude-test';
  const block = blockOf(reply ?? { text: DEFAULT_REPLY_TEXT }, request, n);
  const id = `msg_${n}`;
  if (b.stream === true) return { status: 200, headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }, body: messageStream(id, model, block) };
  return json(200, {
    id,
    type: 'message',
    role: 'assistant',
    model,
    content: [block],
    stop_reason: block.type === 'tool_use' ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 20, output_tokens: 10 },
  });
}
