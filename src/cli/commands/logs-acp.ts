/**
 * `berth logs ID` of an ACP session: the agent's typed events as a readable transcript (or, with
 * `-o json`, one recorded event per line), read page by page; with -f, followed with long-polls
 * (the server answers as soon as there is a new event) until the agent exits.
 * @module
 */
import { MAX_AGENT_EVENTS_WAIT_MS } from '../../api/index.js';
import { write } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { Transcript } from '../transcript.js';
import type { CliContext } from '../types.js';

/** Pause before asking again when a long-poll came back empty at once (a server that does not wait). */
const FOLLOW_POLL_MS = 300;

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), resolve()), { once: true });
  });

export async function runAcpLogs(ctx: CliContext, id: string, opts: { from?: number; follow: boolean }): Promise<number> {
  const client = ctx.client();
  const json = ctx.output === 'json';
  const transcript = new Transcript(id);
  let next = opts.from ?? 0;
  try {
    for (;;) {
      const asked = Date.now();
      const page = await client.acp.events(id, { from: next, signal: ctx.interrupted, ...(opts.follow ? { wait: MAX_AGENT_EVENTS_WAIT_MS } : {}) });
      let text = '';
      for (const e of page.events) text += json ? `${JSON.stringify(e)}\n` : transcript.push(e);
      if (text !== '') await write(ctx.io.stdout, text);
      const moved = page.next > next;
      next = page.next;
      if (page.complete || ctx.interrupted.aborted) break;
      if (!moved) {
        if (!opts.follow) break;
        if (Date.now() - asked < FOLLOW_POLL_MS) await sleep(FOLLOW_POLL_MS, ctx.interrupted);
      }
    }
  } catch (err) {
    if (!ctx.interrupted.aborted) throw err;
  }
  if (!json) await write(ctx.io.stdout, transcript.end());
  return ExitCode.ok;
}
