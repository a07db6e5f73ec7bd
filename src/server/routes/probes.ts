/**
 * The routes a cluster reads without a token: `/healthz` (alive: 200 while the process serves),
 * `/readyz` (200 once the controller takes requests, else 503 with the reason; `?standby=ok` also
 * answers 200 for a healthy standby, as the Pod's readiness probe with leader election asks, while
 * the Service selects the leader by its Pod label) and `/metrics`
 * (Prometheus text format; a token only when `berth serve` is asked to require one). None of them
 * tells anything secret.
 * @module
 */
import { HttpError, sendJson } from '../../shared/http/index.js';
import { readinessResponse, type Readiness } from '../health.js';
import type { ServerMetrics } from '../metrics.js';
import type { ApiHandlers } from './types.js';

interface ProbeDeps {
  readonly readiness: Readiness;
  /** Absent: `/metrics` answers 501. */
  readonly metrics?: ServerMetrics;
}

export function probeRoutes(deps: ProbeDeps): ApiHandlers<'healthz' | 'readyz' | 'metrics'> {
  return {
    healthz: ({ res }) => sendJson(res, 200, { status: 'ok' }),
    readyz: ({ res, url }) => {
      const { status, body } = readinessResponse(deps.readiness.state, { standbyOk: url.searchParams.get('standby') === 'ok' });
      sendJson(res, status, body);
    },
    metrics: async ({ res }) => {
      if (!deps.metrics) throw new HttpError('not_implemented', 'this server keeps no metrics');
      const { contentType, text } = await deps.metrics.render();
      res.writeHead(200, { 'content-type': contentType, 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text) });
      res.end(text);
    },
  };
}
