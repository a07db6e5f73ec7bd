/**
 * `berth logs` of an ACP session: the agent's typed events as a readable transcript — prompts,
 * the agent's messages (streamed chunks joined), tool calls with their status and the diffs of
 * edits, plans, permission requests and their answers, turn ends with usage. Pure: a Transcript is
 * fed events in order (page after page) and returns the text to print for each.
 * @module
 */
import type { AgentEvent } from '../api/index.js';

type Event = AgentEvent['event'];
type Update = Record<string, unknown>;

/** Lines of one diff shown at most (the rest is counted). */
const MAX_DIFF_LINES = 20;

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

/** The text of an ACP content block (text only; other kinds are named). */
function contentText(content: unknown): string {
  if (typeof content !== 'object' || content === null) return '';
  const block = content as { type?: unknown; text?: unknown };
  if (block.type === 'text') return typeof block.text === 'string' ? block.text : '';
  return `[${String(block.type)}]`;
}

/** A line diff of an edit: the changed middle of old and new (common head and tail left out), capped. */
export function diffLines(oldText: string | null, newText: string): string[] {
  const a = oldText === null ? [] : oldText.split('\n');
  const b = newText.split('\n');
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const lines = [...a.slice(head, a.length - tail).map((l) => `-${l}`), ...b.slice(head, b.length - tail).map((l) => `+${l}`)];
  if (lines.length <= MAX_DIFF_LINES) return lines;
  return [...lines.slice(0, MAX_DIFF_LINES), `… ${lines.length - MAX_DIFF_LINES} more line(s)`];
}

/** Usage as ACP reports it at a turn's end (`inputTokens`, `outputTokens`, `totalTokens`, …): `in 12, out 42, total 54`. */
export function usageText(usage: Record<string, unknown> | null): string | null {
  if (usage === null) return null;
  const parts: string[] = [];
  for (const [key, label] of [['inputTokens', 'in'], ['outputTokens', 'out'], ['cachedReadTokens', 'cached'], ['thoughtTokens', 'thought'], ['totalTokens', 'total']] as const) {
    const n = num(usage[key]);
    if (n !== null) parts.push(`${label} ${n}`);
  }
  return parts.length > 0 ? `tokens: ${parts.join(', ')}` : null;
}

const STREAM_PREFIX = { agent: 'agent: ', thought: 'thinking: ', user: 'you: ' } as const;

export class Transcript {
  readonly #sessionRef: string;
  /** Inside the history a loaded session replays. */
  #replaying = false;
  /** The kind of streamed text the last output left open (its line not ended yet). */
  #open: keyof typeof STREAM_PREFIX | null = null;
  readonly #toolTitles = new Map<string, string>();
  readonly #requests = new Map<string, { title: string; options: Map<string, string> }>();

  /** `sessionRef`: the id (or name) the hints name (`berth approve ID`). */
  constructor(sessionRef: string) {
    this.#sessionRef = sessionRef;
  }

  /** The text one event adds to the transcript (may be empty). */
  push({ event }: AgentEvent): string {
    if (event.type === 'update') {
      // a loaded session's history, streamed back by the agent before the session event
      const header = event.replay === true && !this.#replaying ? `${this.#close()}== earlier conversation (replayed by the agent):\n` : '';
      if (event.replay === true) this.#replaying = true;
      return header + this.#update(event.update);
    }
    this.#replaying = false;
    return this.#close() + this.#line(event);
  }

  /** Ends a streamed line left open (at the end of the output). */
  end(): string {
    return this.#close();
  }

  #close(): string {
    const open = this.#open !== null;
    this.#open = null;
    return open ? '\n' : '';
  }

  /** Streamed text of `kind`: a prefix when a new block starts, the text as it comes. */
  #stream(kind: 'agent' | 'thought' | 'user', text: string): string {
    if (text === '') return '';
    const start = this.#open === kind ? '' : `${this.#close()}${STREAM_PREFIX[kind]}`;
    this.#open = text.endsWith('\n') ? null : kind;
    return start + text;
  }

  #line(event: Exclude<Event, { type: 'update' }>): string {
    switch (event.type) {
      case 'session': {
        const r = event.resume;
        const how = r === undefined ? '' : r.loaded ? ` (conversation of ${r.from} continued)` : ` (new conversation; ${r.from}'s was not continued: ${r.reason ?? 'no reason given'})`;
        return `== ACP session ${event.session_id}${event.agent ? ` with ${event.agent.name} ${event.agent.version}` : ''}${how}\n`;
      }
      case 'prompt':
        return `\n>> turn ${event.turn}: ${event.text}\n`;
      case 'permission':
        return this.#permission(event.request);
      case 'permission_answer':
        return this.#answer(event);
      case 'turn_end': {
        const usage = usageText(event.usage);
        return `== turn ${event.turn} ended: ${event.stop_reason}${usage ? ` (${usage})` : ''}\n`;
      }
      case 'error':
        return `!! error${event.turn !== null ? ` in turn ${event.turn}` : ''}: ${event.message}\n`;
    }
  }

  #update(u: Update): string {
    const kind = str(u.sessionUpdate) ?? 'unknown';
    switch (kind) {
      case 'agent_message_chunk':
        return this.#stream('agent', contentText(u.content));
      case 'agent_thought_chunk':
        return this.#stream('thought', contentText(u.content));
      case 'user_message_chunk':
        return this.#replaying ? this.#stream('user', contentText(u.content)) : '';
      case 'usage_update':
      case 'available_commands_update':
      case 'current_mode_update':
      case 'config_option_update':
      case 'session_info_update':
        return ''; // bookkeeping of the agent's (commands, modes, options, titles); usage shows at the turn's end
      case 'tool_call':
        return this.#close() + this.#toolCall(u);
      case 'tool_call_update':
        return this.#close() + this.#toolUpdate(u);
      case 'plan':
        return this.#close() + this.#plan(u);
      default:
        return `${this.#close()}[${kind}]\n`;
    }
  }

  #toolCall(u: Update): string {
    const id = str(u.toolCallId) ?? '?';
    const title = str(u.title) ?? id;
    this.#toolTitles.set(id, title);
    const kind = str(u.kind);
    let out = `tool: ${title}${kind ? ` [${kind}]` : ''} (${str(u.status) ?? 'pending'})\n`;
    for (const c of Array.isArray(u.content) ? (u.content as Update[]) : []) {
      if (c.type === 'diff' && typeof c.newText === 'string') {
        out += `  --- ${str(c.path) ?? '?'}\n${diffLines(typeof c.oldText === 'string' ? c.oldText : null, c.newText)
          .map((l) => `  ${l}\n`)
          .join('')}`;
      } else if (c.type === 'content') {
        const text = contentText(c.content);
        if (text !== '') out += `  ${text.replace(/\n/g, '\n  ')}\n`;
      }
    }
    return out;
  }

  #toolUpdate(u: Update): string {
    const id = str(u.toolCallId) ?? '?';
    const title = str(u.title) ?? this.#toolTitles.get(id) ?? id;
    const status = str(u.status);
    return status === null ? '' : `tool: ${title}: ${status}\n`;
  }

  #plan(u: Update): string {
    const entries = Array.isArray(u.entries) ? (u.entries as Update[]) : [];
    return `plan:\n${entries.map((e) => `  [${str(e.status) ?? '?'}] ${str(e.content) ?? ''}\n`).join('')}`;
  }

  #permission(request: Extract<Event, { type: 'permission' }>['request']): string {
    const title = str(request.tool_call.title) ?? str(request.tool_call.toolCallId) ?? 'a tool call';
    this.#requests.set(request.id, { title, options: new Map(request.options.map((o) => [o.option_id, `${o.name} (${o.kind})`])) });
    const options = request.options.map((o) => o.name).join(' / ');
    return `?? permission requested (${request.id}): ${title} [${options}] (answer: berth approve ${this.#sessionRef} [--deny])\n`;
  }

  #answer(event: Extract<Event, { type: 'permission_answer' }>): string {
    const request = this.#requests.get(event.id);
    const title = request?.title ?? event.id;
    if (event.outcome === 'cancelled') return `-- permission ${event.id} (${title}): cancelled (${event.by})\n`;
    const option = event.option_id === null ? '?' : (request?.options.get(event.option_id) ?? event.option_id);
    const who = event.by === 'person' ? 'a person' : event.by === 'policy' ? 'the approve policy' : event.by;
    return `-- permission ${event.id} (${title}): ${option}, by ${who}\n`;
  }
}
