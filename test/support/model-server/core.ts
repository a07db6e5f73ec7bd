/**
 * The shared core of the scripted model server: SSE framing, the script (a list of turns, each a
 * list of replies) and its stepping, and the record of every request with its credentials kept
 * aside (a test compares them, never prints them). Pure: no sockets here (server.ts has them).
 * @module
 */

/** The JSON of a tool call's input (Anthropic `tool_use.input`, OpenAI `function_call.arguments`). */
export type ToolInput = Record<string, unknown>;

/**
 * One model reply: text, or a call of the tool `tool`. `input` may be computed from the request
 * (e.g. the workspace path Claude Code states in its system prompt).
 */
export type Reply = { text: string } | { tool: string; input: ToolInput | ((request: RecordedRequest) => ToolInput) };

/** One turn of the conversation: the reply to the user's prompt, then one reply per tool result. */
export type Turn = readonly Reply[];

/** What a request is to the script: the main conversation (stepped) or a side request (title, suggestion). */
export type RequestKind = 'main' | 'side' | 'other';

export interface RecordedRequest {
  method: string;
  /** Path and query as sent (`/v1/messages?beta=true`). */
  path: string;
  /** Headers, credential values replaced by `<redacted>`. */
  headers: Record<string, string>;
  /** The parsed JSON body (undefined for none or non-JSON). */
  body: unknown;
  kind: RequestKind;
  /** Main requests: the (1-based) turn and the index of the reply within it that answered. */
  step?: { turn: number; reply: number };
}

/** Headers that carry credentials: recorded redacted, their values kept apart for comparisons. */
const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key', 'proxy-authorization', 'cookie']);

/** The reply given past the end of the script (and to every side request). */
export const DEFAULT_REPLY_TEXT = 'OK';

/** One Server-Sent Event: `event:` line (when named), one `data:` line per line of the JSON, blank line. */
export function sseEvent(name: string | null, data: unknown): string {
  const json = JSON.stringify(data);
  const lines = json.split('\n').map((l) => `data: ${l}`);
  return `${name === null ? '' : `event: ${name}\n`}${lines.join('\n')}\n\n`;
}

/** Parses a text/event-stream body back into its events (for tests of the framing and of replies). */
export function parseSse(text: string): { event: string | null; data: unknown }[] {
  const out: { event: string | null; data: unknown }[] = [];
  for (const block of text.split('\n\n')) {
    if (block.trim() === '') continue;
    let event: string | null = null;
    const data: string[] = [];
    for (const line of block.split('\n')) {
      if (line.startsWith('event: ')) event = line.slice(7);
      else if (line.startsWith('data: ')) data.push(line.slice(6));
    }
    out.push({ event, data: JSON.parse(data.join('\n')) as unknown });
  }
  return out;
}

/**
 * Steps through the turns: a request that starts a turn (the last message is the user's prompt)
 * takes the next turn's first reply; a request carrying a tool result takes the next reply of the
 * current turn. Past the end (of the script or of a turn) the reply is plain text `OK`.
 */
export class ScriptStepper {
  readonly #turns: readonly Turn[];
  #turn = 0;
  #reply = 0;

  constructor(turns: readonly Turn[]) {
    this.#turns = turns;
  }

  /** The reply to the next main request and where it stood in the script (turn 1-based). */
  next(startsTurn: boolean): { reply: Reply; turn: number; index: number } {
    if (startsTurn || this.#turn === 0) {
      this.#turn += 1;
      this.#reply = 0;
    } else {
      this.#reply += 1;
    }
    const reply = this.#turns[this.#turn - 1]?.[this.#reply] ?? { text: DEFAULT_REPLY_TEXT };
    return { reply, turn: this.#turn, index: this.#reply };
  }

  /** Turns started so far. */
  get turnsStarted(): number {
    return this.#turn;
  }
}

/** Resolves a reply's tool input against the request that gets it. */
export function toolInput(reply: Extract<Reply, { tool: string }>, request: RecordedRequest): ToolInput {
  return typeof reply.input === 'function' ? reply.input(request) : reply.input;
}

/**
 * The requests a server saw, in order, and the credential header values that came with them,
 * which are never exposed: `credentialsAll(expected)` compares.
 */
export class RequestLog {
  readonly requests: RecordedRequest[] = [];
  readonly #credentials: string[] = [];

  record(method: string, path: string, rawHeaders: Record<string, string | string[] | undefined>, body: unknown, kind: RequestKind): RecordedRequest {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(rawHeaders)) {
      if (value === undefined) continue;
      const text = Array.isArray(value) ? value.join(', ') : value;
      if (CREDENTIAL_HEADERS.has(name.toLowerCase())) {
        headers[name] = '<redacted>';
        this.#credentials.push(text.replace(/^Bearer\s+/i, ''));
      } else {
        headers[name] = text;
      }
    }
    const request: RecordedRequest = { method, path, headers, body, kind };
    this.requests.push(request);
    return request;
  }

  /** Whether at least one credential arrived and every one equals `expected` (a bare key or a Bearer token). */
  credentialsAll(expected: string): boolean {
    return this.#credentials.length > 0 && this.#credentials.every((c) => c === expected);
  }

  /** The main-conversation requests, in order. */
  main(): RecordedRequest[] {
    return this.requests.filter((r) => r.kind === 'main');
  }
}
