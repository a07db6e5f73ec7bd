/**
 * The egress route (issue 23): a session's connections through the egress proxy — the summary and
 * one page of records (`after`/`limit`, or the latest `tail`); 501 from a service that has none.
 * @module
 */
import { MAX_EGRESS_PAGE, type EgressQuery } from '../../api/index.js';
import { HttpError, sendJson } from '../../shared/http/index.js';
import { queryInt } from '../http-util.js';
import { withSession, type ApiHandlers, type ApiService } from './types.js';

/** The page the query asks for; 400 naming the parameter for a bad one. */
function egressQuery(url: URL): EgressQuery {
  const query: EgressQuery = {};
  for (const name of ['after', 'limit', 'tail'] as const) {
    const value = queryInt(url, name);
    if (value === undefined) continue;
    if (name !== 'after' && value > MAX_EGRESS_PAGE) throw new HttpError('bad_request', `${name}: must be at most ${MAX_EGRESS_PAGE}`, { field: name });
    query[name] = value;
  }
  if (query.tail !== undefined && (query.after !== undefined || query.limit !== undefined)) throw new HttpError('bad_request', 'tail: cannot be combined with after or limit', { field: 'tail' });
  return query;
}

export function egressRoutes(service: ApiService): ApiHandlers<'egress'> {
  return {
    egress: withSession(service, async ({ res, url }, id) => {
      const query = egressQuery(url);
      if (!service.egress) throw new HttpError('not_implemented', 'this server keeps no egress records');
      sendJson(res, 200, await service.egress(id, query));
    }),
  };
}
