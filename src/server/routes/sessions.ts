/**
 * The session routes: launch, list, get, stop, resume and remove.
 * @module
 */
import { LaunchRequestSchema } from '../../api/index.js';
import { readJson, sendJson, sendNoContent } from '../../shared/http/index.js';
import { queryFlag } from '../http-util.js';
import { withSession, type ApiHandlers, type ApiService } from './types.js';

/** Above the prompt and env limits, so an over-limit launch is refused naming the field and its limit. */
const MAX_LAUNCH_BODY = 4 << 20;

export function sessionRoutes(service: ApiService): ApiHandlers<'launch' | 'list' | 'get' | 'stop' | 'resume' | 'remove'> {
  return {
    launch: async ({ req, res }) => sendJson(res, 202, await service.launch(await readJson(req, LaunchRequestSchema, MAX_LAUNCH_BODY))),
    list: async ({ res }) => sendJson(res, 200, { sessions: await service.list() }),
    get: withSession(service, async ({ res }, id) => sendJson(res, 200, await service.get(id))),
    stop: withSession(service, async ({ res }, id) => sendJson(res, 200, await service.stop(id))),
    resume: withSession(service, async ({ res }, id) => sendJson(res, 200, await service.resume(id))),
    remove: withSession(service, async ({ res, url }, id) => {
      await service.remove(id, { force: queryFlag(url, 'force') });
      sendNoContent(res);
    }),
  };
}
