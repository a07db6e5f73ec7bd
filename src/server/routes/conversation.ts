/**
 * The routes of ACP sessions (agents spoken to over the Agent Client Protocol): cancel the turn in
 * flight, answer a permission request, read the agent's typed events.
 * @module
 */
import { ApproveRequestSchema, MAX_AGENT_EVENTS_WAIT_MS } from '../../api/index.js';
import { HttpError, readJson, sendJson, sendNoContent } from '../../shared/http/index.js';
import { queryInt } from '../http-util.js';
import { clientGone, withSession, type ApiHandlers, type ApiService } from './types.js';

/** An answer is a few short fields. */
const MAX_APPROVE_BODY = 4096;

/** The service's ACP operations, or 501 when this service has none. */
function conversation(service: ApiService): Required<Pick<ApiService, 'cancel' | 'approve' | 'agentEvents'>> {
  const { cancel, approve, agentEvents } = service;
  if (!cancel || !approve || !agentEvents) throw new HttpError('not_implemented', 'this server cannot talk to ACP agents');
  return { cancel: cancel.bind(service), approve: approve.bind(service), agentEvents: agentEvents.bind(service) };
}

export function conversationRoutes(service: ApiService): ApiHandlers<'cancel' | 'approve' | 'agentEvents'> {
  return {
    cancel: withSession(service, async ({ res }, id) => {
      await conversation(service).cancel(id);
      sendNoContent(res);
    }),
    approve: withSession(service, async ({ req, res }, id) => {
      // an empty body is an answer too: allow the oldest pending request
      const body = (await readJson(req, ApproveRequestSchema.nullable(), MAX_APPROVE_BODY)) ?? {};
      sendJson(res, 200, await conversation(service).approve(id, body));
    }),
    agentEvents: withSession(service, async ({ res, url }, id) => {
      const from = queryInt(url, 'from');
      const limit = queryInt(url, 'limit');
      if (limit === 0) throw new HttpError('bad_request', 'limit: must be at least 1', { field: 'limit' });
      const wait = queryInt(url, 'wait');
      if (wait !== undefined && wait > MAX_AGENT_EVENTS_WAIT_MS) throw new HttpError('bad_request', `wait: must be at most ${MAX_AGENT_EVENTS_WAIT_MS} (ms)`, { field: 'wait' });
      const page = await conversation(service).agentEvents(id, { ...(from !== undefined ? { from } : {}), ...(limit !== undefined ? { limit } : {}), ...(wait !== undefined ? { wait } : {}), signal: clientGone(res) });
      sendJson(res, 200, page);
    }),
  };
}
