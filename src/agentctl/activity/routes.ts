/**
 * `GET …/activity?window_ms=N` (path from src/protocol/routes.ts): the instance's activity report.
 * @module
 */
import { ACTIVITY_WINDOW, instanceRoutes } from '../../protocol/index.js';
import type { Router } from '../../shared/http/index.js';
import { intParam } from '../http/query.js';
import type { Route } from '../http/server.js';
import type { ProcessSupervisor } from '../processes/supervisor.js';
import { ActivityMonitor } from './snapshot.js';

/** Adds the activity route to an instance router; its monitor lives as long as the router. */
export function addActivityRoute(r: Router<Route>, processes: ProcessSupervisor): void {
  const monitor = new ActivityMonitor(processes);
  r.add('GET', instanceRoutes.activity, {
    handler: ({ query }) => {
      const windowMs = intParam(query, 'window_ms', ACTIVITY_WINDOW.defaultMs, ACTIVITY_WINDOW.minMs, ACTIVITY_WINDOW.maxMs);
      return { status: 200, body: monitor.report(windowMs) };
    },
  });
}
