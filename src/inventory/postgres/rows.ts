/**
 * The session and runtime rows of the Postgres inventory as statement parameters (records.ts maps
 * them to records): their column lists and values in the same order.
 * @module
 */
import type { RuntimeRow, SessionRow } from '../records.js';

export const SESSION_COLUMNS = 'id, name, executor, agent, repository, request, state, error, stages, workspace_path, created_at, updated_at';
export const RUNTIME_COLUMNS = 'session_id, instance_id, executor, state, metadata, stages, secret_refs, created_at, updated_at';

/** `$1, $2, … $n`. */
export function placeholders(n: number): string {
  return Array.from({ length: n }, (_, i) => `$${i + 1}`).join(', ');
}

export function sessionValues(r: SessionRow): unknown[] {
  return [r.id, r.name, r.executor, r.agent, r.repository, r.request, r.state, r.error, r.stages, r.workspace_path, r.created_at, r.updated_at];
}

export function runtimeValues(r: RuntimeRow): unknown[] {
  return [r.session_id, r.instance_id, r.executor, r.state, r.metadata, r.stages, r.secret_refs, r.created_at, r.updated_at];
}
