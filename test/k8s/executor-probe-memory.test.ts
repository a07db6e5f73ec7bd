// The image probe, remembered: a second launch of an image skips it (its bootstrap is the first
// exec), and an image that changed under its name is noticed by the bootstrap's guard and probed
// again — here the tag is moved in the cluster's containerd from the agent image (Node: the bundle)
// to busybox (no Node: the SEA build) between two launches.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, type BerthOnCluster } from './support/berth.js';
import { clusterEnv, requireEnv } from './support/env.js';

const env = clusterEnv();
const sock = requireEnv('BERTH_TEST_CONTAINERD_SOCK');
const tag = `localhost/berth/probe-memory:${randomBytes(4).toString('hex')}`;
const ctr = (...args: string[]): string => execFileSync('ctr', ['--address', sock, '--namespace', 'k8s.io', ...args], { encoding: 'utf8', timeout: 30_000 });

describe('kubernetes executor: the image probe, remembered', () => {
  let h: BerthOnCluster;

  beforeAll(async () => {
    ctr('images', 'tag', '--force', env.agentImage, tag);
    h = await berthOnCluster({ prefix: 'probe-memory', profiles: { mutable: { pod_template: imageTemplate(tag), workspace: { mode: 'empty_dir' } } } });
  });

  afterAll(async () => {
    await h?.close();
    try {
      ctr('images', 'rm', tag);
    } catch {
      // already gone
    }
  });

  const agentctlOf = async (id: string): Promise<string> => (await execText(h.controller, id, ['sh', '-c', 'tr "\\0" " " </proc/1/cmdline'])).stdout;

  it('launches again without probing, and probes anew when the image changed under its name', async () => {
    const c = h.controller;
    // first launch: probed (Node found: the bundle)
    const first = await launchReady(c, { executor: 'mutable', env: FAST_AGENT_ENV });
    expect(await agentctlOf(first.id)).toMatch(/^node \/opt\/berth\/agentctl/);
    await c.remove(first.id);

    // second launch: the remembered probe; its guard passes, the bundle again
    const second = await launchReady(c, { executor: 'mutable', env: FAST_AGENT_ENV });
    expect(await agentctlOf(second.id)).toMatch(/^node \/opt\/berth\/agentctl/);
    expect(await execText(c, second.id, ['sh', '-c', 'echo $((6*7))'])).toMatchObject({ exitCode: 0, stdout: '42\n' });
    await c.remove(second.id);
    expect(h.warnings().filter((w) => w.includes('probing it again'))).toEqual([]);

    // the tag now names busybox: the remembered probe (Node) is wrong; the guard says so, the launch
    // probes again and delivers the SEA build, and still comes up
    ctr('images', 'tag', '--force', env.busyboxImage, tag);
    const third = await launchReady(c, { executor: 'mutable', env: FAST_AGENT_ENV });
    expect((await execText(c, third.id, ['ls', '/opt/berth'])).stdout).toContain('agentctl-sea');
    expect(await execText(c, third.id, ['sh', '-c', 'echo $((6*7))'])).toMatchObject({ exitCode: 0, stdout: '42\n' });
    expect(h.warnings().filter((w) => w.includes('probing it again'))).toHaveLength(1);
    expect(third.stages.map((s) => [s.name, s.status])).toEqual([
      ['storage', 'succeeded'],
      ['pod_ready', 'succeeded'],
      ['bootstrap', 'succeeded'],
      ['agentctl_connect', 'succeeded'],
      ['agent_start', 'succeeded'],
    ]);
    await c.remove(third.id);
    expect(await h.leftovers()).toEqual([]);
  });
});
