import { describe, expect, it } from 'vitest';
import { generateOpenApi } from './openapi.js';
import { matchRoute, ROUTE_TABLE } from './routes.js';

describe('generateOpenApi', () => {
  const doc = generateOpenApi('1.2.3') as {
    openapi: string;
    info: { version: string };
    paths: Record<string, Record<string, { operationId: string; security: unknown[]; responses: Record<string, unknown> }>>;
    components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
  };

  it('is OpenAPI 3.1 with the given version', () => {
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.info.version).toBe('1.2.3');
  });

  it.each(ROUTE_TABLE.map((r) => [r.method, r.path, r.operation] as const))('documents %s %s', (method, path, operation) => {
    const op = doc.paths[path]?.[method.toLowerCase()];
    expect(op?.operationId).toBe(operation);
  });

  it('lists exactly the routes of the table (no stale paths)', () => {
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(documented.sort()).toEqual(ROUTE_TABLE.map((r) => `${r.method} ${r.path}`).sort());
    expect(documented).toContain('POST /api/v1/sessions/{id}/exec');
    expect(documented).toContain('GET /api/v1/sessions/{id}/shell');
  });

  it('requires the bearer token or the dashboard cookie everywhere but /health and the login exchange', () => {
    expect(doc.paths['/health']?.get?.security).toEqual([]);
    expect(doc.paths['/api/v1/dashboard/login']?.post?.security).toEqual([]);
    expect(doc.paths['/api/v1/sessions']?.post?.security).toEqual([{ bearer: [] }, { cookie: [], csrf: [] }]);
    // The cookie is never enough alone, GET included.
    expect(doc.paths['/api/v1/sessions']?.get?.security).toEqual([{ bearer: [] }, { cookie: [], csrf: [] }]);
    expect(doc.paths['/api/v1/sessions']?.post?.responses['401']).toBeDefined();
    expect(doc.paths['/api/v1/sessions']?.post?.responses['403']).toBeDefined();
    const open = ROUTE_TABLE.filter((r) => !r.auth).map((r) => r.path);
    expect(open.sort()).toEqual(['/api/v1/dashboard/login', '/health', '/healthz', '/metrics', '/readyz']);
  });

  it('documents the probes and the metrics, open to anyone', () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) expect(doc.paths[path]?.get?.security).toEqual([]);
    expect(doc.paths['/readyz']?.get?.responses['503']).toMatchObject({ content: { 'application/json': { schema: { required: ['status', 'reason', 'message'] } } } });
    expect(Object.keys(doc.paths['/metrics']?.get?.responses['200'] as object)).toContain('content');
  });

  it('issues login codes to the bearer token only', () => {
    expect(doc.paths['/api/v1/dashboard/codes']?.post?.security).toEqual([{ bearer: [] }]);
  });

  it('derives the component schemas from the zod wire schemas', () => {
    expect(Object.keys(doc.components.schemas.LaunchRequest?.properties ?? {})).toEqual(
      expect.arrayContaining(['repository', 'agent', 'executor', 'name', 'env', 'secretEnv', 'prompt']),
    );
    expect(Object.keys(doc.components.schemas.SessionView?.properties ?? {})).toContain('stages');
  });

  it('documents the ACP routes with their bodies', () => {
    const documented = Object.entries(doc.paths).flatMap(([p, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${p}`));
    expect(documented).toEqual(
      expect.arrayContaining(['POST /api/v1/sessions/{id}/cancel', 'POST /api/v1/sessions/{id}/approve', 'GET /api/v1/sessions/{id}/agent-events']),
    );
    expect(Object.keys(doc.components.schemas.ApproveRequest?.properties ?? {})).toEqual(['requestId', 'deny', 'always']);
    expect(Object.keys(doc.components.schemas.AgentEventPage?.properties ?? {})).toEqual(['events', 'next', 'firstAvailable', 'complete']);
    expect(doc.paths['/api/v1/sessions/{id}/approve']?.post?.responses['409']).toBeDefined();
  });
});

describe('matchRoute', () => {
  it('matches templates and decodes the id', () => {
    expect(matchRoute('POST', '/api/v1/sessions/a%20b/stop')).toEqual({ operation: 'stop', auth: true, id: 'a b' });
    expect(matchRoute('GET', '/health')).toEqual({ operation: 'health', auth: false, id: null });
    expect(matchRoute('GET', '/readyz')).toEqual({ operation: 'readyz', auth: false, id: null });
  });

  it('tells an unknown path from a wrong method', () => {
    expect(matchRoute('GET', '/api/v1/nope')).toEqual({ error: 'not_found' });
    expect(matchRoute('PUT', '/api/v1/sessions/x')).toEqual({ error: 'method_not_allowed' });
    expect(matchRoute('GET', '/api/v1/sessions//stop')).toEqual({ error: 'not_found' });
  });
});
