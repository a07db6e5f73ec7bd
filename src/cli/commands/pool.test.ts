import { describe, expect, it } from 'vitest';
import type { PoolView } from '../../api/index.js';
import { renderPools } from './pool.js';

const now = new Date('2026-12-04T02:00:00Z');
const pool: PoolView = {
  profile: 'k8s',
  executor: 'cluster',
  size: 2,
  maxAgeMs: 86_400_000,
  repository: { url: 'https://git.example/app.git', branch: 'main' },
  ready: 1,
  creating: 1,
  members: [
    { id: 'pool-a', state: 'ready', createdAt: '2026-12-04T01:58:00Z', pod: 'agents/berth-0123456789abcdef' },
    { id: 'pool-b', state: 'creating', createdAt: '2026-12-04T01:59:30Z', pod: null },
  ],
};

describe('berth pool ls', () => {
  it('shows ready out of size, members being made, max_age and the repository; wide adds the members', () => {
    const table = renderPools([pool], now, false);
    expect(table).toMatch(/^PROFILE\s+EXECUTOR\s+READY\s+MAKING\s+MAX-AGE\s+REPOSITORY\n/);
    expect(table).toMatch(/k8s\s+cluster\s+1\/2\s+1\s+\S+\s+https:\/\/git\.example\/app\.git \(main\)\n/);
    expect(table).not.toContain('pool-a');
    const wide = renderPools([pool], now, true);
    expect(wide).toMatch(/k8s\s+pool-a\s+ready\s+agents\/berth-0123456789abcdef\s+2m/);
    expect(wide).toMatch(/k8s\s+pool-b\s+creating\s+-\s+30s/);
  });

  it('says how to configure a pool when there is none', () => {
    expect(renderPools([], now, false)).toBe('no warm pool (set profiles.<name>.pool in berth.yaml)\n');
  });
});
