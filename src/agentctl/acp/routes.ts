/**
 * The instance routes of ACP processes (paths from src/protocol/routes.ts): a new turn, cancel,
 * the recorded events, and the pending permission requests with their answers.
 * @module
 */
import { instanceRoutes, LIMITS, PermissionAnswerSchema, PromptRequestSchema, type PromptAccepted } from '../../protocol/index.js';
import { readJson, type Router } from '../../shared/http/index.js';
import { intParam } from '../http/query.js';
import type { Route } from '../http/server.js';
import type { ProcessSupervisor } from '../processes/supervisor.js';

const P = ':id';

/** Adds the ACP routes to an instance router. */
export function addAcpRoutes(r: Router<Route>, processes: ProcessSupervisor): void {
  const id = (params: Record<string, string>): string => params['id'] as string;
  r.add('POST', instanceRoutes.processPrompt(P), {
    handler: async ({ req, params }) => {
      const body = await readJson(req, PromptRequestSchema, LIMITS.maxBodyBytes);
      const accepted: PromptAccepted = { turn: processes.acp(id(params)).prompt(body.text) };
      return { status: 202, body: accepted };
    },
  });
  r.add('POST', instanceRoutes.processCancel(P), {
    handler: async ({ params }) => {
      await processes.acp(id(params)).cancel();
      return { status: 204 };
    },
  });
  r.add('GET', instanceRoutes.processEvents(P), {
    handler: async ({ params, query }) => {
      const from = intParam(query, 'from', 0, 0, Number.MAX_SAFE_INTEGER);
      const limit = intParam(query, 'limit', LIMITS.maxOutputPage, 1, LIMITS.maxOutputPage);
      const wait = intParam(query, 'wait', 0, 0, LIMITS.maxEventWaitMs);
      if (wait > 0) await processes.waitEvents(id(params), from, wait);
      return { status: 200, body: processes.events(id(params), from, limit) };
    },
  });
  r.add('GET', instanceRoutes.processPermissions(P), {
    handler: ({ params }) => ({ status: 200, body: { permissions: processes.acp(id(params)).permissions() } }),
  });
  r.add('POST', instanceRoutes.processPermission(P, ':request'), {
    handler: async ({ req, params }) => {
      const body = await readJson(req, PermissionAnswerSchema, LIMITS.maxBodyBytes);
      processes.acp(id(params)).answer(params['request'] as string, body);
      return { status: 204 };
    },
  });
}
