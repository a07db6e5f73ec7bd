import { describe, expect, it } from 'vitest';
import { verdictOf } from './doctor-egress.js';

const probe = (name: string, expect: 'blocked' | 'reachable', result: 'reachable' | 'refused' | 'blocked' | 'unknown') => ({ name, target: `${name}:1`, expect, result, detail: '' });

describe("doctor --egress's verdict", () => {
  it('is enforced when what must be blocked is and the proxy answers', () => {
    expect(verdictOf([probe('API server', 'blocked', 'blocked'), probe('metadata address', 'blocked', 'blocked'), probe('egress proxy', 'reachable', 'reachable')]).verdict).toBe('enforced');
  });

  it('says NetworkPolicy is not enforced when a blocked destination answers (connected or refused: the packets got through)', () => {
    for (const leaked of ['reachable', 'refused'] as const) {
      const r = verdictOf([probe('API server', 'blocked', leaked), probe('egress proxy', 'reachable', 'reachable')]);
      expect(r.verdict).toBe('not_enforced');
      expect(r.message).toMatch(/^NetworkPolicy is not enforced on this cluster: .*the API server \(API server:1\)/);
    }
  });

  it('tells an unreachable proxy and an image it cannot probe in apart from enforcement', () => {
    expect(verdictOf([probe('API server', 'blocked', 'blocked'), probe('egress proxy', 'reachable', 'blocked')]).verdict).toBe('proxy_unreachable');
    expect(verdictOf([probe('API server', 'blocked', 'unknown')]).verdict).toBe('inconclusive');
  });
});
