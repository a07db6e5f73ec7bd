/**
 * The Node HTTP kit both servers are built on (agentctl's control and instance servers, and
 * `berth serve`'s API): one router, one JSON body reader (413 past its cap, an empty body is
 * `null`), one HttpError with its envelope, one request pipeline and one constant-time token
 * check. Node-only (`node:http`, `node:crypto`); it imports nothing of Berth above `shared/`, so
 * the agentctl bundle stays small.
 * @module
 */
export { HttpError, httpErrorFactory, isHttpError } from './errors.js';
export { Router, type Params } from './router.js';
export { readJson } from './body.js';
export { errorBody, rejectUpgrade, sendJson, sendNoContent } from './respond.js';
export { createRequestListener, parseTarget, routeRequest, type RequestOutcome } from './pipeline.js';
export { bearerToken, tokenMatches } from './token.js';
