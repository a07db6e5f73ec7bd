/**
 * What a process that continues an earlier ACP process's conversation (`resume_from`) needs from
 * that process's recorded events: its last ACP session, and whether it got to a first turn (when it
 * did not, the new process sends the launch prompt instead of leaving the conversation empty).
 * @module
 */
import { join } from 'node:path';
import type { AcpUsage } from '../../protocol/index.js';
import { protocolError } from '../errors.js';
import type { ProcessMeta } from '../processes/meta.js';
import type { ResumeTarget } from './client.js';
import { EVENTS_FILE, EventLog } from './events.js';
import { NO_USAGE, tally } from './usage.js';

export interface ResumePlan {
  readonly target: ResumeTarget;
  /** The earlier process started a turn (or its oldest events were dropped by retention). */
  readonly hadPrompt: boolean;
}

const PAGE = 1000;

/** The conversation `from` (an exited ACP process of this instance: `earlier`) left for a new `protocol` process to continue. */
export function resumePlan(from: string, protocol: string | undefined, earlier: { meta: ProcessMeta; dir: string } | undefined, maxBytes: number): ResumePlan {
  if (protocol !== 'acp') throw protocolError('bad_request', 'resume_from: only an ACP process (protocol acp) continues a conversation');
  if (earlier === undefined) throw protocolError('bad_request', `resume_from: no process ${from} in this instance`);
  if (earlier.meta.protocol !== 'acp') throw protocolError('bad_request', `resume_from: process ${from} does not speak ACP`);
  if (earlier.meta.status === 'running') throw protocolError('conflict', `resume_from: process ${from} is still running`);
  return readResume(from, join(earlier.dir, EVENTS_FILE), maxBytes);
}

/** Reads the event log at `path` of earlier process `from`. */
function readResume(from: string, path: string, maxBytes: number): ResumePlan {
  const log = EventLog.load(path, maxBytes);
  let sessionId: string | null = null;
  let hadPrompt = false;
  let usage: AcpUsage = NO_USAGE;
  let next = 0;
  for (;;) {
    const page = log.page(next, PAGE, true);
    if (next === 0 && page.first_available > 0) hadPrompt = true;
    for (const { event } of page.events) {
      if (event.type === 'session') {
        sessionId = event.session_id;
        usage = event.resume?.usage ?? usage;
      } else if (event.type === 'prompt') hadPrompt = true;
      usage = tally(usage, event);
    }
    if (page.next <= next || page.events.length === 0) break;
    next = page.next;
  }
  log.close();
  return { target: { from, sessionId, usage }, hadPrompt };
}
