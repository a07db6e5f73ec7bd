/**
 * An ACP session's typed events (`GET …/agent-events`) folded into what the conversation panel
 * shows (pure): the transcript's entries (prompts, the agent's messages with streamed chunks joined,
 * tool calls with their latest status and diffs, plans, permission requests and their answers, turn
 * ends, errors), the permission requests still pending, whether a turn runs, and the usage reported.
 * A run that continued an earlier one's conversation starts with the history the agent streamed
 * back while loading it (`replay` updates, before its `session` event): those entries are marked
 * `replay` under a `history` heading, and its `session` entry says how the conversation continued.
 * The ACP payloads are as the agent sent them, so every field is read defensively.
 * @module
 */
import type { AgentEvent, SessionView } from '../../../src/api/index.js';

type Event = AgentEvent['event'];
type Obj = Record<string, unknown>;
export type PermissionRequest = Extract<Event, { type: 'permission' }>['request'];

export interface DiffContent {
  path: string | null;
  oldText: string | null;
  newText: string;
}

/** A tool call as known so far (a `tool_call` and the `tool_call_update`s after it, merged). */
export interface ToolCall {
  id: string;
  title: string;
  kind: string | null;
  status: string;
  diffs: DiffContent[];
  texts: string[];
  locations: string[];
}

interface PlanEntry {
  content: string;
  status: string;
  priority: string | null;
}

/** How a run's conversation opened when it continued an earlier run's (`from`). */
export interface ResumeInfo {
  from: string;
  /** The earlier conversation was restored (session/load); else `reason` says why a new one was opened. */
  loaded: boolean;
  reason: string | null;
}

type EntryBody =
  | { kind: 'session'; seq: number; agent: string | null; resume: ResumeInfo | null }
  /** The heading of the history a continued conversation's agent streamed back. */
  | { kind: 'history'; seq: number }
  | { kind: 'prompt'; seq: number; turn: number; text: string }
  /** `user`: a prompt of the earlier conversation, as the agent replayed it. */
  | { kind: 'message'; seq: number; role: 'agent' | 'thought' | 'user'; text: string }
  | { kind: 'tool'; seq: number; call: ToolCall }
  | { kind: 'plan'; seq: number; entries: PlanEntry[] }
  | { kind: 'permission'; seq: number; id: string; title: string; answer: string | null }
  | { kind: 'turn_end'; seq: number; turn: number; stopReason: string; tokens: Tokens | null }
  | { kind: 'error'; seq: number; turn: number | null; message: string };

/** An entry; `replay` when it belongs to the earlier conversation the agent streamed back. */
export type Entry = EntryBody & { replay?: true };

export interface Tokens {
  input: number | null;
  output: number | null;
  total: number | null;
}

export interface Usage {
  /** Turns of this run (prompts sent to it). */
  turns: number;
  /** The earlier conversation's prompts the agent replayed (0 when it replayed none). */
  earlierTurns: number;
  /** Over the whole conversation: this run's, and the earlier runs' it continues (their usage at its start). */
  toolCalls: number;
  /** Token counts summed over the turns that reported them; null when none did. */
  tokens: Tokens | null;
  /** The latest `usage_update`: tokens in context and the window's size. */
  context: { used: number; size: number } | null;
  /** The latest cumulative cost an agent reported. */
  cost: { amount: number; currency: string } | null;
}

/** The wire form of a conversation's usage (the `resume` of a `session` event). */
type WireUsage = NonNullable<NonNullable<Extract<Event, { type: 'session' }>['resume']>['usage']>;

interface AcpModel {
  entries: Entry[];
  pending: PermissionRequest[];
  turnRunning: boolean;
  usage: Usage;
}

const str = (v: unknown): string | null => (typeof v === 'string' && v !== '' ? v : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const obj = (v: unknown): Obj | null => (typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : null);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);

/** The text of an ACP content block (other kinds are named in brackets). */
function blockText(content: unknown): string {
  const block = obj(content);
  if (block === null) return '';
  if (block.type === 'text') return typeof block.text === 'string' ? block.text : '';
  return `[${String(block.type)}]`;
}

function readContent(content: unknown): Pick<ToolCall, 'diffs' | 'texts'> {
  const diffs: DiffContent[] = [];
  const texts: string[] = [];
  for (const c of arr(content).map(obj)) {
    if (c?.type === 'diff' && typeof c.newText === 'string') diffs.push({ path: str(c.path), oldText: typeof c.oldText === 'string' ? c.oldText : null, newText: c.newText });
    else if (c?.type === 'content') {
      const text = blockText(c.content);
      if (text !== '') texts.push(text);
    } else if (c?.type === 'terminal') texts.push(`[terminal ${str(c.terminalId) ?? ''}]`);
  }
  return { diffs, texts };
}

const readLocations = (v: unknown): string[] =>
  arr(v)
    .map(obj)
    .flatMap((l) => (l && str(l.path) ? [`${String(l.path)}${num(l.line) !== null ? `:${String(l.line)}` : ''}`] : []));

/** A tool call (or its update) merged over what was known of it. */
function mergeToolCall(known: ToolCall | undefined, u: Obj): ToolCall {
  const id = str(u.toolCallId) ?? known?.id ?? '?';
  const content = u.content === undefined || u.content === null ? null : readContent(u.content);
  return {
    id,
    title: str(u.title) ?? known?.title ?? id,
    kind: str(u.kind) ?? known?.kind ?? null,
    status: str(u.status) ?? known?.status ?? 'pending',
    diffs: content?.diffs ?? known?.diffs ?? [],
    texts: content?.texts ?? known?.texts ?? [],
    locations: u.locations === undefined || u.locations === null ? (known?.locations ?? []) : readLocations(u.locations),
  };
}

function readTokens(usage: Obj | null): Tokens | null {
  if (usage === null) return null;
  const t = { input: num(usage.inputTokens), output: num(usage.outputTokens), total: num(usage.totalTokens) };
  return t.input === null && t.output === null && t.total === null ? null : t;
}

function addTokens(a: Tokens | null, b: Tokens | null): Tokens | null {
  if (b === null) return a;
  if (a === null) return b;
  const plus = (x: number | null, y: number | null): number | null => (x === null ? y : y === null ? x : x + y);
  return { input: plus(a.input, b.input), output: plus(a.output, b.output), total: plus(a.total, b.total) };
}

/** `usage` with the earlier runs' (the usage a continued conversation had when its last run ended) added. */
function withEarlierUsage(usage: Usage, earlier: WireUsage): Usage {
  const tokens = readTokens({ inputTokens: earlier.input_tokens, outputTokens: earlier.output_tokens, totalTokens: earlier.total_tokens });
  return {
    ...usage,
    toolCalls: usage.toolCalls + earlier.tool_calls,
    tokens: addTokens(tokens, usage.tokens),
    context: usage.context ?? earlier.context,
    cost: usage.cost ?? earlier.cost,
  };
}

/** Folds the events (in order, as paged from the start) into the panel's model. */
export function foldEvents(events: readonly AgentEvent[]): AcpModel {
  const f = new Folder();
  for (const e of events) f.push(e);
  return f.model();
}

class Folder {
  readonly entries: Entry[] = [];
  readonly tools = new Map<string, { index: number; call: ToolCall }>();
  readonly pending = new Map<string, PermissionRequest>();
  readonly permissionAt = new Map<string, number>();
  usage: Usage = { turns: 0, earlierTurns: 0, toolCalls: 0, tokens: null, context: null, cost: null };
  lastPrompt = 0;
  lastEnded = 0;
  /** Index of the plan entry of the current turn (plans are replaced whole). */
  planAt: number | null = null;

  push({ seq, event }: AgentEvent): void {
    if (event.type === 'update') return event.replay === true ? this.replay(seq, event.update) : this.update(seq, event.update);
    this.planAt = event.type === 'prompt' || event.type === 'session' ? null : this.planAt;
    switch (event.type) {
      case 'session': {
        const r = event.resume;
        if (r?.usage) this.usage = withEarlierUsage(this.usage, r.usage);
        const resume = r ? { from: r.from, loaded: r.loaded, reason: r.reason } : null;
        this.entries.push({ kind: 'session', seq, agent: event.agent ? `${event.agent.name} ${event.agent.version}` : null, resume });
        return;
      }
      case 'prompt':
        this.lastPrompt = Math.max(this.lastPrompt, event.turn);
        this.usage = { ...this.usage, turns: this.usage.turns + 1 };
        this.entries.push({ kind: 'prompt', seq, turn: event.turn, text: event.text });
        return;
      case 'permission':
        return this.permission(seq, event.request);
      case 'permission_answer':
        return this.answer(event);
      case 'turn_end': {
        this.lastEnded = Math.max(this.lastEnded, event.turn);
        const tokens = readTokens(event.usage);
        this.usage = { ...this.usage, tokens: addTokens(this.usage.tokens, tokens) };
        this.entries.push({ kind: 'turn_end', seq, turn: event.turn, stopReason: event.stop_reason, tokens });
        return;
      }
      case 'error':
        if (event.turn !== null) this.lastEnded = Math.max(this.lastEnded, event.turn);
        this.entries.push({ kind: 'error', seq, turn: event.turn, message: event.message });
    }
  }

  update(seq: number, u: Obj, replay = false): void {
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk':
        return this.chunk(seq, u.sessionUpdate === 'agent_message_chunk' ? 'agent' : 'thought', blockText(u.content), replay);
      case 'tool_call':
      case 'tool_call_update':
        return this.tool(seq, u, replay);
      case 'plan':
        return this.plan(seq, u, replay);
      case 'usage_update':
        return replay ? undefined : this.usageUpdate(u);
      default:
      // user_message_chunk (the prompt is shown), available_commands_update, mode changes: not shown
    }
  }

  /** An update of the history the agent streams back while loading the earlier conversation. */
  replay(seq: number, u: Obj): void {
    if (this.entries[this.entries.length - 1]?.replay !== true) this.entries.push({ kind: 'history', seq, replay: true });
    if (u.sessionUpdate !== 'user_message_chunk') return this.update(seq, u, true);
    const last = this.entries[this.entries.length - 1];
    if (!(last?.kind === 'message' && last.role === 'user')) {
      this.usage = { ...this.usage, earlierTurns: this.usage.earlierTurns + 1 };
      this.planAt = null;
    }
    this.chunk(seq, 'user', blockText(u.content), true);
  }

  chunk(seq: number, role: 'agent' | 'thought' | 'user', text: string, replay: boolean): void {
    if (text === '') return;
    const last = this.entries[this.entries.length - 1];
    if (last?.kind === 'message' && last.role === role && (last.replay === true) === replay) this.entries[this.entries.length - 1] = { ...last, text: last.text + text };
    else this.entries.push({ kind: 'message', seq, role, text, ...(replay ? { replay } : {}) });
  }

  tool(seq: number, u: Obj, replay: boolean): void {
    const id = str(u.toolCallId) ?? `?${seq}`;
    // the earlier conversation's tool call ids may come again in this run's
    const key = replay ? `replay:${id}` : id;
    const known = this.tools.get(key);
    const call = mergeToolCall(known?.call, u);
    const flag = replay ? { replay } : {};
    // counted as the agentctl counts them (usage.ts): each tool_call of this run
    if (!replay && u.sessionUpdate === 'tool_call') this.usage = { ...this.usage, toolCalls: this.usage.toolCalls + 1 };
    if (known) {
      this.entries[known.index] = { kind: 'tool', seq: this.entries[known.index]?.seq ?? seq, call, ...flag };
      this.tools.set(key, { index: known.index, call });
      return;
    }
    this.tools.set(key, { index: this.entries.length, call });
    this.entries.push({ kind: 'tool', seq, call, ...flag });
  }

  plan(seq: number, u: Obj, replay: boolean): void {
    const entries = arr(u.entries)
      .map(obj)
      .map((e) => ({ content: str(e?.content) ?? '', status: str(e?.status) ?? 'pending', priority: str(e?.priority) }));
    const flag = replay ? { replay } : {};
    if (this.planAt !== null) this.entries[this.planAt] = { kind: 'plan', seq, entries, ...flag };
    else {
      this.planAt = this.entries.length;
      this.entries.push({ kind: 'plan', seq, entries, ...flag });
    }
  }

  usageUpdate(u: Obj): void {
    const used = num(u.used);
    const size = num(u.size);
    const cost = obj(u.cost);
    const amount = num(cost?.amount);
    const currency = str(cost?.currency);
    this.usage = {
      ...this.usage,
      ...(used !== null && size !== null ? { context: { used, size } } : {}),
      ...(amount !== null && currency !== null ? { cost: { amount, currency } } : {}),
    };
  }

  permission(seq: number, request: PermissionRequest): void {
    const known = this.tools.get(str(request.tool_call.toolCallId) ?? '');
    const call = mergeToolCall(known?.call, request.tool_call);
    this.pending.set(request.id, request);
    this.permissionAt.set(request.id, this.entries.length);
    this.entries.push({ kind: 'permission', seq, id: request.id, title: call.title, answer: null });
  }

  answer(event: Extract<Event, { type: 'permission_answer' }>): void {
    const request = this.pending.get(event.id);
    this.pending.delete(event.id);
    const at = this.permissionAt.get(event.id);
    const entry = at === undefined ? undefined : this.entries[at];
    if (at === undefined || entry?.kind !== 'permission') return;
    const option = request?.options.find((o) => o.option_id === event.option_id);
    const who = event.by === 'person' ? 'a person' : event.by === 'policy' ? 'the approve policy' : event.by;
    const answer = event.outcome === 'cancelled' ? `cancelled (${event.by})` : `${option?.name ?? event.option_id ?? '?'}, by ${who}`;
    this.entries[at] = { ...entry, answer };
  }

  model(): AcpModel {
    return { entries: this.entries, pending: [...this.pending.values()], turnRunning: this.lastPrompt > this.lastEnded, usage: this.usage };
  }
}

/** The tool call a permission request is about, completed from what the transcript knows of it. */
export function requestToolCall(request: PermissionRequest, entries: readonly Entry[]): ToolCall {
  const id = str(request.tool_call.toolCallId);
  const known = entries.find((e): e is Extract<Entry, { kind: 'tool' }> => e.kind === 'tool' && e.replay !== true && e.call.id === id);
  return mergeToolCall(known?.call, request.tool_call);
}

/** The session view's usage of the conversation (`agentProcess.usage`): its totals over every run. */
type ViewUsage = NonNullable<NonNullable<SessionView['agentProcess']>['usage']>;

const larger = (a: number | null, b: number | null): number | null => (a === null ? b : b === null ? a : Math.max(a, b));

/**
 * The usage to show: the session view's totals (over every run) when it has them, else what the
 * events tell. The view is read when the session changes and the events as they come, so the
 * events can be ahead of it: each count is the larger of the two, and the context and cost are the
 * events' latest, unless events were dropped before they were read (then the view's).
 */
export function shownUsage(view: ViewUsage | undefined, events: Usage, dropped: boolean): Usage {
  if (view === undefined) return events;
  const viewTokens = readTokens({ inputTokens: view.inputTokens, outputTokens: view.outputTokens, totalTokens: view.totalTokens });
  const tokens =
    viewTokens === null || events.tokens === null
      ? (viewTokens ?? events.tokens)
      : { input: larger(viewTokens.input, events.tokens.input), output: larger(viewTokens.output, events.tokens.output), total: larger(viewTokens.total, events.tokens.total) };
  const [first, second] = dropped ? [view, events] : [events, view];
  return { ...events, toolCalls: Math.max(view.toolCalls, events.toolCalls), tokens, context: first.context ?? second.context, cost: first.cost ?? second.cost };
}
