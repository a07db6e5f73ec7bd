import { describe, expect, it } from 'vitest';
import {
  CreateInstanceRequestSchema,
  ERROR_CODES,
  ERROR_STATUS,
  HandshakeRequestSchema,
  StartProcessRequestSchema,
  StreamMessageSchema,
  WriteFileRequestSchema,
  controlRoutes,
  instanceRoutes,
} from './index.js';

describe('protocol schemas', () => {
  it('rejects unknown fields on requests the daemon must not guess about', () => {
    const r = CreateInstanceRequestSchema.safeParse({ id: 'a', workspace_path: '/w', surprise: 1 });
    expect(r.success).toBe(false);
    expect(HandshakeRequestSchema.safeParse({ nonce: 'n', extra: true }).success).toBe(false);
  });

  it('fills defaults for env and labels', () => {
    const r = CreateInstanceRequestSchema.parse({ id: 'sess-1', workspace_path: '/w' });
    expect(r.env).toEqual({});
    expect(r.labels).toEqual({});
  });

  it.each(['../x', 'a/b', '', ' a', 'a b', '.hidden'])('refuses the instance id %j', (id) => {
    expect(CreateInstanceRequestSchema.safeParse({ id, workspace_path: '/w' }).success).toBe(false);
  });

  it('refuses environment names that a shell could not export', () => {
    const r = CreateInstanceRequestSchema.safeParse({ id: 'a', workspace_path: '/w', env: { 'A-B': '1' } });
    expect(r.success).toBe(false);
    if (!r.success) expect(r.error.issues[0]?.path).toEqual(['env', 'A-B']);
  });

  it('needs a non-empty argv and defaults the kind to process', () => {
    expect(StartProcessRequestSchema.safeParse({ command: [] }).success).toBe(false);
    expect(StartProcessRequestSchema.parse({ command: ['true'] }).kind).toBe('process');
  });

  it('decodes write requests with utf8 as the default encoding', () => {
    expect(WriteFileRequestSchema.parse({ path: 'a.txt', content: 'x' })).toMatchObject({ encoding: 'utf8', mkdirs: true });
  });

  it('discriminates stream messages on type', () => {
    const m = StreamMessageSchema.parse({ type: 'exit', exit_code: 3, signal: null, next: 9 });
    expect(m.type === 'exit' && m.exit_code).toBe(3);
    expect(StreamMessageSchema.safeParse({ type: 'nope' }).success).toBe(false);
  });

  it('gives every error code an HTTP status in the 4xx/5xx range', () => {
    for (const code of ERROR_CODES) {
      expect(ERROR_STATUS[code]).toBeGreaterThanOrEqual(400);
      expect(ERROR_STATUS[code]).toBeLessThan(600);
    }
  });

  it('escapes ids in route paths', () => {
    expect(controlRoutes.instance('a b')).toBe('/api/v1/instances/a%20b');
    expect(instanceRoutes.processStream('p/1')).toBe('/api/v1/processes/p%2F1/stream');
  });
});
