/**
 * `BerthClient.pools`: the warm pools of the server's Kubernetes profiles — list them with their
 * members, and empty one now. It shares the client's transport. Browser-safe.
 * @module
 */
import type { z } from 'zod';
import { PoolListSchema, PoolRemoveResultSchema, type PoolRemoveResult, type PoolView } from './pools.js';
import { apiRoutes } from './routes.js';

/** The BerthClient call this client goes through. */
interface PoolTransport {
  json<S extends z.ZodType>(method: string, path: string, schema: S, opts: { body?: unknown; signal?: AbortSignal | undefined }): Promise<z.infer<S>>;
}

export class PoolClient {
  readonly #t: PoolTransport;

  constructor(transport: PoolTransport) {
    this.#t = transport;
  }

  /** Each pooled profile with its size and members. */
  async list(): Promise<PoolView[]> {
    return (await this.#t.json('GET', apiRoutes.pools, PoolListSchema, {})).pools;
  }

  /** Deletes the ready members of `profile`'s pool now (it refills while its size is above 0); 404 for a profile with no pool. */
  remove(profile: string): Promise<PoolRemoveResult> {
    return this.#t.json('DELETE', apiRoutes.pool(profile), PoolRemoveResultSchema, {});
  }
}
