import { describe, expect, it } from 'vitest';
import { applySgr, initialAnsiState, palette256, parseAnsi, spanPresentation } from './ansi.js';

describe('parseAnsi', () => {
  it('splits coloured text into spans and resets on 0', () => {
    const { spans } = parseAnsi('plain \x1b[1;31mred bold\x1b[0m back');
    expect(spans).toEqual([
      { text: 'plain ', style: {} },
      { text: 'red bold', style: { bold: true, fg: 1 } },
      { text: ' back', style: {} },
    ]);
  });

  it('carries a sequence cut between two pieces and keeps the style across pieces', () => {
    const first = parseAnsi('a\x1b[3', initialAnsiState());
    expect(first.spans).toEqual([{ text: 'a', style: {} }]);
    const second = parseAnsi('2mgreen', first.state);
    expect(second.spans).toEqual([{ text: 'green', style: { fg: 2 } }]);
    const third = parseAnsi(' still', second.state);
    expect(third.spans).toEqual([{ text: ' still', style: { fg: 2 } }]);
  });

  it('drops non-SGR sequences (erase line, cursor, OSC title) and stray carriage returns', () => {
    const { spans } = parseAnsi('x\x1b[2K\x1b[1Ay\x1b]0;title\x07z\r\n');
    expect(spans.map((s) => s.text).join('')).toBe('xyz\n');
  });

  it('reads 256-colour and true-colour codes', () => {
    expect(applySgr({}, '38;5;208')).toEqual({ fg: 208 });
    expect(applySgr({}, '48;2;255;0;16')).toEqual({ bg: '#ff0010' });
    expect(applySgr({ fg: 1, bold: true }, '22;39')).toEqual({});
    expect(applySgr({}, '94')).toEqual({ fg: 12 });
  });
});

describe('spanPresentation', () => {
  it('uses classes for basic colours and inline colours for the rest', () => {
    expect(spanPresentation({ fg: 1, bold: true })).toEqual({ className: 'ansi-fg-1 ansi-bold', css: {} });
    expect(spanPresentation({ fg: 196 }).css).toEqual({ color: palette256(196) });
    expect(palette256(196)).toBe('#ff0000');
    expect(palette256(232)).toBe('#080808');
  });

  it('swaps colours for inverse', () => {
    expect(spanPresentation({ fg: 2, inverse: true }).className).toBe('ansi-fg-inverse ansi-bg-2');
  });
});
