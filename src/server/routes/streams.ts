/**
 * The streaming read routes: a session's events and every session's (Server-Sent Events), and
 * the agent's output as NDJSON (`logs`, optionally followed).
 * @module
 */
import type { ServerResponse } from 'node:http';
import type { LogMessage } from '../../api/index.js';
import type { SessionEvent } from '../../controller/index.js';
import { streamAllEvents, streamSessionEvents } from '../all-events.js';
import { writeLine } from '../backpressure.js';
import { toErrorResponse } from '../error-response.js';
import { queryFlag, queryInt, toWire } from '../http-util.js';
import { clientGone, withSession, type ApiHandlers, type ApiService } from './types.js';

interface StreamDeps {
  readonly service: ApiService;
  /** How often a quiet stream sends a keep-alive. */
  readonly keepAliveMs: number;
}

export function streamRoutes({ service, keepAliveMs }: StreamDeps): ApiHandlers<'events' | 'allEvents' | 'logs'> {
  return {
    events: withSession(service, ({ res }, id) =>
      streamSessionEvents(service, res, {
        keepAliveMs,
        sessionId: id,
        snapshot: async () => {
          const view = await service.get(id);
          const at = new Date().toISOString();
          // Stages before the state: a reader that stops at a final state has seen every stage.
          return [...view.stages.map((stage): SessionEvent => ({ type: 'stage', sessionId: id, stage, at })), { type: 'state', sessionId: id, state: view.state, error: view.error, at }];
        },
      }),
    ),
    allEvents: ({ res }) => streamAllEvents(service, res, keepAliveMs),
    logs: withSession(service, ({ res, url }, id) => streamLogs({ service, keepAliveMs }, res, url, id)),
  };
}

/** `GET …/logs`: the agent's output as NDJSON lines, ended by `end` (or `error`); pings while quiet. */
async function streamLogs({ service, keepAliveMs }: StreamDeps, res: ServerResponse, url: URL, id: string): Promise<void> {
  const from = queryInt(url, 'from');
  const follow = queryFlag(url, 'follow');
  const previous = queryFlag(url, 'previous');
  // Registered before the first await: the client may leave while the session is looked up.
  const gone = clientGone(res);
  await service.get(id); // a clean 404 before the stream starts
  if (gone.aborted) return;
  // x-accel-buffering: nginx (an Ingress) passes each line on at once even where proxy buffering is on.
  res.writeHead(200, { 'content-type': 'application/x-ndjson', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
  // Sent now, not with the first output: a quiet agent's follower must not wait for a ping to start.
  res.flushHeaders();
  // Each line waits for a full response buffer to drain before the next chunk is pulled: a
  // follower that stops reading pauses the stream back to agentctl, not a growing buffer here.
  const line = (m: LogMessage): Promise<void> => writeLine(res, `${JSON.stringify(m)}\n`);
  // A stalled client needs no keep-alive (and must not get an unbounded pile of them).
  const ping = setInterval(() => {
    if (!res.writableNeedDrain) void line({ type: 'ping' });
  }, keepAliveMs);
  ping.unref();
  try {
    for await (const chunk of service.logs(id, { ...(from !== undefined ? { from } : {}), follow, ...(previous ? { previous } : {}), signal: gone })) {
      if (gone.aborted) break;
      await line({ type: 'output', chunk: toWire(chunk) });
    }
    if (!gone.aborted) void line({ type: 'end' });
  } catch (err) {
    if (!gone.aborted) void line({ type: 'error', error: toErrorResponse(err).body.error });
  } finally {
    clearInterval(ping);
  }
  if (!res.destroyed) res.end();
}
