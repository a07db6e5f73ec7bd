/**
 * After a followed launch or resume of an ACP session: waits (bounded) for the agent's ACP session
 * to open and says how — on a resume, whether the conversation was loaded (`session/load`) or a
 * new one opened, and why.
 * @module
 */
import type { AgentEvent, BerthClient } from '../../api/index.js';

/** How long to wait for the session to open (a real agent takes about a second; a cold one longer). */
const ACP_OPEN_WAIT_MS = 30_000;
const POLL_MS = 200;

type Opened = Extract<AgentEvent['event'], { type: 'session' }>;
type Failed = Extract<AgentEvent['event'], { type: 'error' }>;

/** The `session` (or first `error`) event of the session's current agent run; null when none came in time. */
export async function awaitAcpOpen(client: BerthClient, id: string, signal: AbortSignal, waitMs = ACP_OPEN_WAIT_MS): Promise<Opened | Failed | null> {
  const deadline = Date.now() + waitMs;
  let from = 0;
  while (!signal.aborted && Date.now() < deadline) {
    const page = await client.acp.events(id, { from, signal }).catch(() => null);
    if (page === null) return null;
    for (const { event } of page.events) if (event.type === 'session' || event.type === 'error') return event;
    if (page.complete) return null;
    from = page.next;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
  return null;
}

/** The line that says how the ACP session opened. */
export function describeOpen(event: Opened | Failed | null, verb: 'launch' | 'resume'): string {
  if (event === null) return '  the agent has not opened its ACP session yet: berth logs -f ID shows when it does';
  if (event.type === 'error') return `  the agent's ACP session failed: ${event.message}`;
  const agent = event.agent === null ? 'the agent' : `${event.agent.name} ${event.agent.version}`;
  const r = event.resume;
  if (r === undefined) return verb === 'resume' ? `  ${agent}: new conversation (no earlier run to continue)` : `  ${agent}: ACP session open`;
  if (r.loaded) return `  ${agent}: conversation continued (session/load of the earlier run's session ${r.session_id ?? ''})`;
  return `  ${agent}: new conversation, the earlier one was not continued: ${r.reason ?? 'no reason given'}`;
}
