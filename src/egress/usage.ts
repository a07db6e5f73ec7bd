/**
 * The token usage a model API reports in a response, read as the bytes pass through the broker,
 * never holding the body: a streaming JSON scanner keeps only the `usage` object it looks for (at
 * most `MAX_USAGE_BYTES`). Pure.
 *
 * Where the usage is:
 * - JSON bodies (`application/json`): the top-level `usage` of an Anthropic message
 *   (`input_tokens`/`output_tokens`), an OpenAI chat completion (`prompt_tokens`/`completion_tokens`)
 *   or an OpenAI Responses API response (`input_tokens`/`output_tokens`);
 * - server-sent events (`text/event-stream`), one JSON document per event: Anthropic's
 *   `message_start` (`message.usage`) and `message_delta` (`usage`, the output count so far), OpenAI
 *   chat chunks with `usage` (the last chunk with `stream_options.include_usage`) and the Responses
 *   API's `response.completed` (`response.usage`).
 * The last figure reported wins. Anything else (another content type, a compressed body, a usage
 * object larger than the bound, numbers that are no counts) leaves the figures null.
 * @module
 */

export interface TokenUsage {
  readonly inputTokens: number | null;
  readonly outputTokens: number | null;
}

export interface UsageReader {
  /** Observes the next bytes of the (decoded, uncompressed) body. */
  push(chunk: Buffer): void;
  result(): TokenUsage;
}

/** The most bytes of one `usage` object kept; a larger one is not read. */
export const MAX_USAGE_BYTES = 4096;
const MAX_KEY_BYTES = 32;

/** A reader for a response with these `Content-Type` and `Content-Encoding` headers. */
export function usageReader(contentType: string | undefined, contentEncoding: string | undefined): UsageReader {
  const totals = new UsageTotals();
  const encoding = (contentEncoding ?? '').trim().toLowerCase();
  const type = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (encoding !== '' && encoding !== 'identity') return { push: () => undefined, result: () => totals.result() };
  if (type === 'text/event-stream') {
    const sse = new SseUsage(totals);
    return { push: (chunk) => sse.push(chunk), result: () => totals.result() };
  }
  if (type === 'application/json' || type.endsWith('+json')) {
    const json = new JsonUsageScanner((usage) => totals.add(usage));
    return { push: (chunk) => json.push(chunk), result: () => totals.result() };
  }
  return { push: () => undefined, result: () => totals.result() };
}

class UsageTotals {
  private input: number | null = null;
  private output: number | null = null;

  add(usage: Record<string, unknown>): void {
    this.input = count(usage.input_tokens ?? usage.prompt_tokens) ?? this.input;
    this.output = count(usage.output_tokens ?? usage.completion_tokens) ?? this.output;
  }

  result(): TokenUsage {
    return { inputTokens: this.input, outputTokens: this.output };
  }
}

const count = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null);

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const LF = 0x0a;
const CR = 0x0d;

/** The parents a `usage` object may have: top level, or inside a top-level `message` or `response`. */
const USAGE_PARENTS = new Set(['message', 'response']);

/**
 * Scans one JSON document byte by byte (structure only: UTF-8 continuation bytes never look like
 * JSON punctuation) and hands each `usage` object found at a known place to `found`. Holds the
 * container kinds and keys of the top three levels, and the usage object's bytes while inside it.
 */
class JsonUsageScanner {
  private depth = 0;
  private inString = false;
  private escaped = false;
  private expectKey = false;
  private key: number[] | null = null;
  /** For depths 1-3: whether the container there is an object, and its current key. */
  private readonly isObject: boolean[] = [];
  private readonly keys: string[] = [];
  private capture: number[] | null = null;
  private captureDepth = 0;

  constructor(private readonly found: (usage: Record<string, unknown>) => void) {}

  push(chunk: Buffer): void {
    for (let i = 0; i < chunk.length; i += 1) this.byte(chunk[i]!);
  }

  private byte(c: number): void {
    if (this.capture !== null) {
      if (this.capture.length >= MAX_USAGE_BYTES) this.capture = null; // too large: not read
      else this.capture.push(c);
    }
    if (this.inString) return this.stringByte(c);
    switch (c) {
      case QUOTE:
        this.inString = true;
        this.key = this.expectKey && this.depth <= 2 ? [] : null;
        this.expectKey = false;
        return;
      case OPEN_OBJECT:
        if (this.capture === null && this.isUsagePlace()) {
          this.capture = [c];
          this.captureDepth = this.depth;
        }
        return this.open(true);
      case OPEN_ARRAY:
        return this.open(false);
      case CLOSE_OBJECT:
      case CLOSE_ARRAY:
        this.depth = Math.max(0, this.depth - 1);
        this.expectKey = false;
        if (this.capture !== null && this.depth === this.captureDepth) this.finishCapture();
        return;
      case COMMA:
        this.expectKey = this.depth <= 3 && this.isObject[this.depth - 1] === true;
        return;
    }
  }

  private stringByte(c: number): void {
    if (this.escaped) {
      this.escaped = false;
    } else if (c === BACKSLASH) {
      this.escaped = true;
    } else if (c === QUOTE) {
      this.inString = false;
      if (this.key !== null) this.keys[this.depth - 1] = Buffer.from(this.key).toString('latin1');
      this.key = null;
      return;
    }
    if (this.key !== null && this.key.length <= MAX_KEY_BYTES) this.key.push(c);
  }

  private open(object: boolean): void {
    this.depth += 1;
    if (this.depth <= 3) {
      this.isObject[this.depth - 1] = object;
      this.keys[this.depth - 1] = '';
    }
    this.expectKey = object;
  }

  /** Whether an object opening here is the value of `usage`, `message.usage` or `response.usage`. */
  private isUsagePlace(): boolean {
    const { depth, isObject, keys } = this;
    if (depth === 1) return isObject[0] === true && keys[0] === 'usage';
    return depth === 2 && isObject[0] === true && isObject[1] === true && USAGE_PARENTS.has(keys[0]!) && keys[1] === 'usage';
  }

  private finishCapture(): void {
    const bytes = Buffer.from(this.capture!);
    this.capture = null;
    try {
      const usage = JSON.parse(bytes.toString('utf8')) as unknown;
      if (typeof usage === 'object' && usage !== null && !Array.isArray(usage)) this.found(usage as Record<string, unknown>);
    } catch {
      // not JSON after all: no figures from it
    }
  }
}

/** Server-sent events: the `data` lines of each event go to a fresh JSON scanner. */
class SseUsage {
  private field: number[] | null = []; // the current line's field name, until its ':'
  private inData = false;
  private lineEmpty = true;
  private lastCr = false;
  private scanner: JsonUsageScanner | null = null;

  constructor(private readonly totals: UsageTotals) {}

  push(chunk: Buffer): void {
    let dataStart = -1;
    for (let i = 0; i < chunk.length; i += 1) {
      const c = chunk[i]!;
      if (c === LF || c === CR) {
        if (dataStart >= 0) this.scanner?.push(chunk.subarray(dataStart, i));
        dataStart = -1;
        if (!(c === LF && this.lastCr)) this.endLine();
        this.lastCr = c === CR;
        continue;
      }
      this.lastCr = false;
      this.lineEmpty = false;
      if (this.inData) {
        if (dataStart < 0) dataStart = i;
        continue;
      }
      if (this.field === null) continue; // a field we do not read
      if (c !== 0x3a) {
        if (this.field.length < 8) this.field.push(c);
        else this.field = null;
        continue;
      }
      if (Buffer.from(this.field).toString('latin1') === 'data') {
        this.inData = true;
        this.scanner ??= new JsonUsageScanner((usage) => this.totals.add(usage));
      } else {
        this.field = null;
      }
    }
    if (dataStart >= 0) this.scanner?.push(chunk.subarray(dataStart));
  }

  private endLine(): void {
    if (this.lineEmpty) this.scanner = null; // the blank line ends the event
    else if (this.inData) this.scanner?.push(Buffer.from('\n'));
    this.field = [];
    this.inData = false;
    this.lineEmpty = true;
  }
}
