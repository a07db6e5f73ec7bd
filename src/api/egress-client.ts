/**
 * `BerthClient.egress`: a session's connections through Berth's egress proxy — the summary and one
 * page of records. It shares the client's transport. Browser-safe.
 * @module
 */
import type { z } from 'zod';
import { EgressPageSchema, type EgressPage, type EgressQuery } from './egress.js';
import { apiRoutes } from './routes.js';

/** The BerthClient call this client goes through. */
interface EgressTransport {
  json<S extends z.ZodType>(method: string, path: string, schema: S, opts: { body?: unknown; signal?: AbortSignal | undefined }): Promise<z.infer<S>>;
}

export class EgressClient {
  readonly #t: EgressTransport;

  constructor(transport: EgressTransport) {
    this.#t = transport;
  }

  /**
   * The summary and the records after `after` (at most `limit`, default 1000; `limit: 0` the
   * summary alone), or the latest `tail` records; ascending. 404 for an unknown session.
   */
  get(id: string, query: EgressQuery = {}, signal?: AbortSignal): Promise<EgressPage> {
    const q = new URLSearchParams();
    for (const key of ['after', 'limit', 'tail'] as const) if (query[key] !== undefined) q.set(key, String(query[key]));
    return this.#t.json('GET', `${apiRoutes.egress(id)}${q.size > 0 ? `?${q.toString()}` : ''}`, EgressPageSchema, { signal });
  }
}
