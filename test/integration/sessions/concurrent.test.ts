import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Controller } from '../../../src/controller/index.js';
import {
  agentctlBundle,
  agentctlPids,
  execText,
  FAST_AGENT_ENV,
  makeRepo,
  startController,
  teardownController,
  tempDir,
  waitForOutput,
} from './helpers.js';

const N = 10;

describe('Concurrent launches', () => {
  let work: string;
  let dataDir: string;
  let c: Controller;

  beforeAll(async () => {
    work = tempDir('concurrent');
    dataDir = join(work, 'data');
    c = await startController(dataDir, agentctlBundle(work));
  });

  afterAll(() => teardownController(c, dataDir, work));

  it(`launches ${N} sessions at once with no cross-talk`, async () => {
    const markers = Array.from({ length: N }, (_, i) => `marker-${i}-${Math.random().toString(36).slice(2, 8)}`);
    const repos = markers.map((m, i) => makeRepo(work, `repo-${i}`, m));
    const launched = await Promise.all(repos.map((path, i) => c.launch({ repository: { path }, env: FAST_AGENT_ENV, prompt: `task ${i}` })));
    expect(new Set(launched.map((s) => s.id)).size).toBe(N);

    const settled = await Promise.all(launched.map((s) => c.waitUntilSettled(s.id)));
    for (const s of settled) {
      expect(s.error, `session ${s.id}`).toBeNull();
      expect(s.state).toBe('ready');
    }
    expect(new Set(settled.map((s) => s.workspacePath)).size).toBe(N);
    expect(agentctlPids(dataDir)).toHaveLength(N);

    await Promise.all(
      launched.map(async (s, i) => {
        const out = await waitForOutput(c, s.id, /ready for instructions/);
        expect(out).toContain(`agent> marker: ${markers[i]}`);
        expect(out).toContain(`agent> task: task ${i}`);
        for (const [j, other] of markers.entries()) if (j !== i) expect(out).not.toContain(other);
        expect((await execText(c, s.id, ['cat', 'BERTH_MARKER'])).stdout).toBe(`${markers[i]}\n`);
      }),
    );

    await Promise.all(launched.map((s) => c.remove(s.id)));
    expect(await c.list()).toEqual([]);
    expect(agentctlPids(dataDir)).toEqual([]);
  });
});
