/**
 * ANSI SGR (colours, bold …) → styled text spans, for the agent's output. Streaming: feed text in
 * pieces (an escape sequence split across two pieces is carried over); other control sequences
 * (cursor moves, erase line, OSC titles) are dropped. Pure: no DOM.
 * @module
 */

/** A colour: an index into the 256-colour palette (0–15 are the themeable basic colours) or `#rrggbb`. */
type AnsiColor = number | string;

interface AnsiStyle {
  fg?: AnsiColor;
  bg?: AnsiColor;
  bold?: boolean;
  dim?: boolean;
  italic?: boolean;
  underline?: boolean;
  inverse?: boolean;
}

interface AnsiSpan {
  text: string;
  style: AnsiStyle;
}

export interface AnsiState {
  style: AnsiStyle;
  /** An incomplete escape sequence at the end of the last piece. */
  pending: string;
}

export function initialAnsiState(): AnsiState {
  return { style: {}, pending: '' };
}

const ESC = '\x1b';

/** Splits `text` into spans; returns the spans and the state to pass with the next piece. */
export function parseAnsi(text: string, state: AnsiState = initialAnsiState()): { spans: AnsiSpan[]; state: AnsiState } {
  const input = state.pending + text;
  let style = state.style;
  const spans: AnsiSpan[] = [];
  let buf = '';
  const flush = (): void => {
    if (buf) push(spans, { text: buf, style });
    buf = '';
  };
  let i = 0;
  while (i < input.length) {
    const ch = input[i]!;
    if (ch !== ESC) {
      // Drop other C0 controls except newline and tab; a lone CR (progress bars) is dropped too.
      if (ch === '\n' || ch === '\t' || ch >= ' ' || ch > '\x7f') buf += ch;
      i++;
      continue;
    }
    const seq = readEscape(input, i);
    if (seq === null) {
      flush();
      return { spans, state: { style, pending: input.slice(i) } };
    }
    if (seq.final === 'm') {
      flush();
      style = applySgr(style, seq.params);
    }
    i = seq.end;
  }
  flush();
  return { spans, state: { style, pending: '' } };
}

function push(spans: AnsiSpan[], span: AnsiSpan): void {
  const last = spans[spans.length - 1];
  if (last && sameStyle(last.style, span.style)) last.text += span.text;
  else spans.push(span);
}

function sameStyle(a: AnsiStyle, b: AnsiStyle): boolean {
  return (
    a.fg === b.fg &&
    a.bg === b.bg &&
    !a.bold === !b.bold &&
    !a.dim === !b.dim &&
    !a.italic === !b.italic &&
    !a.underline === !b.underline &&
    !a.inverse === !b.inverse
  );
}

/** Reads one escape sequence at `start`; null when it is cut off at the end of the input. */
function readEscape(s: string, start: number): { final: string; params: string; end: number } | null {
  const kind = s[start + 1];
  if (kind === undefined) return null;
  if (kind === '[') {
    for (let j = start + 2; j < s.length; j++) {
      const c = s.charCodeAt(j);
      if (c >= 0x40 && c <= 0x7e) return { final: s[j]!, params: s.slice(start + 2, j), end: j + 1 };
    }
    return s.length - start > 64 ? { final: '', params: '', end: s.length } : null;
  }
  if (kind === ']') {
    // OSC: ends with BEL or ESC \
    for (let j = start + 2; j < s.length; j++) {
      if (s[j] === '\x07') return { final: '', params: '', end: j + 1 };
      if (s[j] === ESC && s[j + 1] === '\\') return { final: '', params: '', end: j + 2 };
    }
    return s.length - start > 4096 ? { final: '', params: '', end: s.length } : null;
  }
  return { final: '', params: '', end: start + 2 };
}

/** Applies SGR parameters (`1;31`, `38;5;208`, `38;2;r;g;b`, `0` …) to a style. */
export function applySgr(current: AnsiStyle, params: string): AnsiStyle {
  if (/[^0-9;:]/.test(params)) return current; // private sequences (e.g. `?25`) are not SGR
  const codes = params === '' ? [0] : params.split(/[;:]/).map((p) => (p === '' ? 0 : Number(p)));
  let s: AnsiStyle = { ...current };
  for (let k = 0; k < codes.length; k++) {
    const c = codes[k]!;
    if (c === 0) s = {};
    else if (c === 1) s.bold = true;
    else if (c === 2) s.dim = true;
    else if (c === 3) s.italic = true;
    else if (c === 4) s.underline = true;
    else if (c === 7) s.inverse = true;
    else if (c === 22) s.bold = s.dim = false;
    else if (c === 23) s.italic = false;
    else if (c === 24) s.underline = false;
    else if (c === 27) s.inverse = false;
    else if (c >= 30 && c <= 37) s.fg = c - 30;
    else if (c >= 90 && c <= 97) s.fg = c - 90 + 8;
    else if (c === 39) delete s.fg;
    else if (c >= 40 && c <= 47) s.bg = c - 40;
    else if (c >= 100 && c <= 107) s.bg = c - 100 + 8;
    else if (c === 49) delete s.bg;
    else if (c === 38 || c === 48) {
      const { color, used } = extendedColor(codes, k + 1);
      if (color !== undefined) {
        if (c === 38) s.fg = color;
        else s.bg = color;
      }
      k += used;
    }
  }
  for (const key of Object.keys(s) as (keyof AnsiStyle)[]) if (s[key] === false) delete s[key];
  return s;
}

function extendedColor(codes: number[], at: number): { color: AnsiColor | undefined; used: number } {
  const mode = codes[at];
  if (mode === 5) {
    const n = codes[at + 1];
    return { color: n !== undefined && n >= 0 && n <= 255 ? n : undefined, used: 2 };
  }
  if (mode === 2) {
    const rgb = codes.slice(at + 1, at + 4);
    if (rgb.length < 3 || rgb.some((v) => v < 0 || v > 255)) return { color: undefined, used: 4 };
    return { color: `#${rgb.map((v) => v.toString(16).padStart(2, '0')).join('')}`, used: 4 };
  }
  return { color: undefined, used: 0 };
}

/** The CSS class names and inline style of a span (basic colours are classes, so a theme can set them). */
export function spanPresentation(style: AnsiStyle): { className: string; css: Record<string, string> } {
  const classes: string[] = [];
  const css: Record<string, string> = {};
  let fg = style.fg;
  let bg = style.bg;
  if (style.inverse) {
    [fg, bg] = [bg ?? 'default-bg', fg ?? 'default-fg'];
  }
  const paint = (color: AnsiColor | undefined, kind: 'fg' | 'bg'): void => {
    if (color === undefined) return;
    if (color === 'default-fg' || color === 'default-bg') classes.push(`ansi-${kind}-${color === 'default-fg' ? 'default' : 'inverse'}`);
    else if (typeof color === 'number' && color < 16) classes.push(`ansi-${kind}-${color}`);
    else css[kind === 'fg' ? 'color' : 'background-color'] = typeof color === 'number' ? palette256(color) : color;
  };
  paint(fg, 'fg');
  paint(bg, 'bg');
  if (style.bold) classes.push('ansi-bold');
  if (style.dim) classes.push('ansi-dim');
  if (style.italic) classes.push('ansi-italic');
  if (style.underline) classes.push('ansi-underline');
  return { className: classes.join(' '), css };
}

/** xterm's 256-colour palette for indices 16–255 (6×6×6 cube, then 24 greys). */
export function palette256(n: number): string {
  if (n >= 232) {
    const v = 8 + (n - 232) * 10;
    return `#${hex(v)}${hex(v)}${hex(v)}`;
  }
  const i = n - 16;
  const level = (x: number): number => (x === 0 ? 0 : 55 + x * 40);
  return `#${hex(level(Math.floor(i / 36)))}${hex(level(Math.floor(i / 6) % 6))}${hex(level(i % 6))}`;
}

function hex(v: number): string {
  return v.toString(16).padStart(2, '0');
}
