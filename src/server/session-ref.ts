/**
 * Session references on the API: every route that takes a session id also takes the session's
 * unique name. Resolved here, before the service is called, so the controller only ever sees ids.
 * @module
 */
import type { SessionService } from '../controller/index.js';
import { SESSION_ID } from '../shared/launch-limits.js';
import { HttpError } from '../shared/http/index.js';

/**
 * The session id `ref` stands for: `ref` itself when it has the shape of an id or is one, else the id
 * of the one session named `ref`. An unknown ref is returned as is (the service then answers 404
 * with its usual message); a name several sessions share (made before names had to be unique) is a
 * 400 listing their ids.
 */
export async function resolveSessionRef(service: Pick<SessionService, 'list'>, ref: string): Promise<string> {
  // Names may not look like ids, so an id-shaped ref needs no lookup (and costs no list()).
  if (SESSION_ID.test(ref)) return ref;
  const sessions = await service.list();
  if (sessions.some((s) => s.id === ref)) return ref;
  const named = sessions.filter((s) => s.name === ref);
  if (named.length === 1) return (named[0] as { id: string }).id;
  if (named.length > 1) {
    throw new HttpError('bad_request', `session name '${ref}' is ambiguous: it names ${named.map((s) => s.id).join(', ')} (use the id)`);
  }
  return ref;
}
