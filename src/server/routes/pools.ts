/**
 * The warm pool routes: list the pools with their members, and delete a profile's ready members
 * now (501 from a service that keeps no pools).
 * @module
 */
import { HttpError, sendJson } from '../../shared/http/index.js';
import type { ApiHandlers, ApiService } from './types.js';

function poolService(service: ApiService): Required<Pick<ApiService, 'pools' | 'removePool'>> {
  const { pools, removePool } = service;
  if (!pools || !removePool) throw new HttpError('not_implemented', 'this server keeps no warm pools');
  return { pools: pools.bind(service), removePool: removePool.bind(service) };
}

export function poolRoutes(service: ApiService): ApiHandlers<'pools' | 'removePool'> {
  return {
    pools: async ({ res }) => sendJson(res, 200, { pools: await poolService(service).pools() }),
    removePool: async ({ res, params }) => sendJson(res, 200, await poolService(service).removePool(params['id'] ?? '')),
  };
}
