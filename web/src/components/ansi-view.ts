/**
 * Appends ANSI-coloured output to a <pre> as DOM nodes (no re-render of what is already there),
 * keeping the view pinned to the bottom while the reader is at the bottom.
 * @module
 */
import { initialAnsiState, parseAnsi, spanPresentation, type AnsiState } from '../lib/ansi.js';

/** Oldest nodes are dropped beyond this many (the page stays responsive on chatty agents). */
const MAX_NODES = 20_000;

export class AnsiView {
  #state: AnsiState = initialAnsiState();
  #decoder = new TextDecoder();
  constructor(readonly el: HTMLElement) {}

  write(bytes: Uint8Array): void {
    const text = this.#decoder.decode(bytes, { stream: true });
    const { spans, state } = parseAnsi(text, this.#state);
    this.#state = state;
    const scroller = this.el;
    const pinned = scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 24;
    const frag = document.createDocumentFragment();
    for (const span of spans) {
      const { className, css } = spanPresentation(span.style);
      if (!className && Object.keys(css).length === 0) {
        frag.append(span.text);
        continue;
      }
      const node = document.createElement('span');
      if (className) node.className = className;
      for (const [k, v] of Object.entries(css)) node.style.setProperty(k, v);
      node.textContent = span.text;
      frag.append(node);
    }
    this.el.append(frag);
    while (this.el.childNodes.length > MAX_NODES) this.el.firstChild?.remove();
    if (pinned) scroller.scrollTop = scroller.scrollHeight;
  }

  clear(): void {
    this.el.textContent = '';
    this.#state = initialAnsiState();
    this.#decoder = new TextDecoder();
  }
}
