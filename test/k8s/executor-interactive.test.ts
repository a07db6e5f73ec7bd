// Getting into a Kubernetes session as a person does: an interactive shell (a real PTY in the Pod,
// through the supervised forward), and ten sessions launched at once without cross-talk.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestRepo, type TestRepo } from './support/git.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';

const env = clusterEnv();

describe('kubernetes executor: shell and concurrent launches', () => {
  let h: BerthOnCluster;
  let repo: TestRepo;

  beforeAll(async () => {
    repo = await createTestRepo('interactive', { 'README.md': '# interactive\n' });
    h = await berthOnCluster({
      prefix: 'interactive',
      profiles: { k8s: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'managed_pvc', size: '1Gi' } } },
    });
  });

  afterAll(async () => {
    await h?.close();
    await repo?.remove();
  });

  it('opens a shell with a real PTY in the workspace', async () => {
    const c = h.controller;
    const v = await launchReady(c, { repository: { url: repo.url }, executor: 'k8s', env: FAST_AGENT_ENV });
    const shell = await c.openShell(v.id, { rows: 24, cols: 80 });
    let screen = '';
    const dec = new TextDecoder();
    let answered!: () => void;
    const answer = new Promise<void>((resolve) => (answered = resolve));
    // read to the end (the shell's exit), noting when the answer is on the screen
    const reading = (async () => {
      for await (const chunk of shell.output) {
        screen += dec.decode(chunk.data);
        if (/\b42\b/.test(screen) && screen.includes('/workspace')) answered();
      }
    })();
    shell.write('pwd; tty; echo $((6*7))\n');
    await Promise.race([answer, new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer; screen so far:\n${screen}`)), 30_000))]);
    expect(screen).toContain('/workspace');
    expect(screen).toMatch(/\/dev\/pts\/\d+/);
    shell.write('exit\n');
    await shell.exit;
    await reading;
    await c.remove(v.id);
  });

  it('launches ten sessions at once, each in its own Pod and PVC, without cross-talk', async () => {
    const c = h.controller;
    const views = await Promise.all(
      Array.from({ length: 10 }, (_, i) => launchReady(c, { repository: { url: repo.url }, executor: 'k8s', name: `many-${i}`, env: { ...FAST_AGENT_ENV, WHO: `session-${i}` } })),
    );
    const outputs = await Promise.all(views.map((v) => execText(c, v.id, ['sh', '-c', 'echo "$WHO $BERTH_SESSION_ID"'])));
    outputs.forEach((o, i) => expect(o.stdout).toBe(`session-${i} ${views[i]!.id}\n`));
    for (const v of views) {
      const pods = await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` });
      expect(pods.items, `one Pod for ${v.id}`).toHaveLength(1);
    }
    await Promise.all(views.map((v) => c.remove(v.id)));
    expect(await h.leftovers()).toEqual([]);
  });
});
