// Issue 18, items 8, 10 and 11 on the real test cluster:
// - a setup_script that never ends fails the launch on its own budget, naming setup_script, after
//   showing `running setup_script` as the bootstrap's reason (and no kubelet Event as one); the
//   rollback leaves no Pod or PVC;
// - the agentctl nonce is in no file and no environment the agent can read, and a resume's Pod gets
//   a new one;
// - the stop of an empty_dir session (whose Pod stays) ends the daemon the agent left with setsid.
import { createServer, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InventoryStore } from '../../src/inventory/index.js';
import { berthOnCluster, execText, FAST_AGENT_ENV, imageTemplate, launchReady, waitForOutput, type BerthOnCluster } from './support/berth.js';
import { clusterEnv } from './support/env.js';
import { execInPod } from './support/exec.js';
import { launchFailing, recordEvents, sessionLeftovers, stageOf, type EventRecorder } from './support/failures.js';

const env = clusterEnv();
const PVC = { mode: 'managed_pvc', size: '1Gi' };
/** What the bootstrap stage may give as its waiting reason: its own steps, or a container restart. */
const STEP_REASONS = ['Uploading', 'Preparing', 'Cloning', 'RunningSetupScript', 'ContainerRestarted'];

/** The nonce the controller recorded (decrypted from the inventory) for a session. */
async function recordedNonce(dataDir: string, sessionId: string): Promise<string> {
  const store = InventoryStore.open({ dataDir });
  try {
    const ref = (await store.getRuntime(sessionId))?.secretRefs.AGENTCTL_BOOTSTRAP_NONCE;
    if (ref === undefined) throw new Error(`session ${sessionId} has no recorded nonce`);
    return await store.revealSecret(ref);
  } finally {
    await store.close();
  }
}

/** Every command line of the Pod's pid namespace, one per line. */
const PROCESS_LIST = 'for p in /proc/[0-9]*; do c=$(tr "\\0" " " <"$p/cmdline" 2>/dev/null) && [ -n "$c" ] && echo "${p#/proc/}: $c"; done';

describe.concurrent('kubernetes executor: bootstrap budgets, nonce, stop', () => {
  let h: BerthOnCluster;
  let events: EventRecorder;
  // an https remote that accepts TCP and never answers (on the host, where the git daemon is)
  const silent: Socket[] = [];
  let tarpit: Server;
  let tarpitUrl: string;

  beforeAll(async () => {
    tarpit = createServer((s) => silent.push(s.on('error', () => undefined)));
    await new Promise<void>((resolve) => tarpit.listen(0, '0.0.0.0', resolve));
    tarpitUrl = `https://${new URL(env.gitBase).hostname}:${(tarpit.address() as AddressInfo).port}/never/answers.git`;
    h = await berthOnCluster({
      prefix: 'hardening',
      profiles: {
        stall: { pod_template: imageTemplate(env.agentImage), workspace: PVC, setup_script: 'sleep infinity', timeouts: { setup_script_seconds: 5 } },
        'slow-remote': { pod_template: imageTemplate(env.agentImage), workspace: PVC, timeouts: { clone_seconds: 5 } },
        pvc: { pod_template: imageTemplate(env.agentImage), workspace: PVC },
        ephemeral: { pod_template: imageTemplate(env.agentImage), workspace: { mode: 'empty_dir' } },
      },
      agents: {
        sleeper: { command: ['sh', '-c', 'echo agent started; exec sleep 600'] },
        daemonizer: { command: ['sh', '-c', 'setsid nohup sleep 1000 >/dev/null 2>&1 </dev/null & echo agent started; exec sleep 600'] },
      },
    });
    events = recordEvents(h.controller);
  });

  afterAll(async () => {
    events?.stop();
    for (const s of silent) s.destroy();
    tarpit?.close();
    try {
      if (h) expect(await h.leftovers(), 'nothing Berth-labelled is left in the namespace').toEqual([]);
    } finally {
      await h?.close();
    }
  });

  it('a setup_script that never ends fails bootstrap on setup_script_seconds, showing what it ran, and is rolled back', async () => {
    const v = await launchFailing(h.controller, { executor: 'stall', agent: 'demo', prompt: 'never runs', env: FAST_AGENT_ENV });
    const stage = stageOf(v, 'bootstrap');
    expect(stage).toMatchObject({ status: 'failed', reason: 'TimedOut' });
    expect(stage.message).toContain('setup_script did not finish within 5 s');
    expect(stage.message, 'the timeout names its setting').toContain('profiles.stall.kubernetes.timeouts.setup_script_seconds');
    expect(v.error).toMatchObject({ stage: 'bootstrap' });
    const waiting = events.stages(v.id).filter((s) => s.name === 'bootstrap' && s.status === 'waiting');
    expect(
      waiting.find((s) => s.reason === 'RunningSetupScript' && /running setup_script/.test(s.message ?? '')),
      `bootstrap said it was running setup_script; seen: ${JSON.stringify(waiting)}`,
    ).toBeDefined();
    expect(
      waiting.filter((s) => !STEP_REASONS.includes(s.reason ?? '')),
      'no Pod Event (e.g. a kubelet warning) is reported as what bootstrap waits on',
    ).toEqual([]);
    expect(await sessionLeftovers(h, v.id), 'the rollback deleted the Pod and the PVC').toEqual([]);
  });

  it('a clone from a remote that never answers fails bootstrap on clone_seconds, after showing the clone', async () => {
    const v = await launchFailing(h.controller, { repository: { url: tarpitUrl }, executor: 'slow-remote', agent: 'demo', prompt: 'never runs', env: FAST_AGENT_ENV });
    expect(stageOf(v, 'bootstrap')).toMatchObject({ status: 'failed', reason: 'TimedOut' });
    expect(stageOf(v, 'bootstrap').message).toContain('the clone did not finish within 5 s (profiles.slow-remote.kubernetes.timeouts.clone_seconds)');
    const waiting = events.stages(v.id).filter((s) => s.name === 'bootstrap' && s.status === 'waiting');
    expect(waiting.map((s) => s.reason), 'bootstrap said it was cloning').toContain('Cloning');
    expect(silent.length, 'the Pod did reach the silent remote').toBeGreaterThan(0);
    expect(await sessionLeftovers(h, v.id)).toEqual([]);
  });

  it('keeps the nonce out of every file and environment of the Pod, and gives a resumed Pod a new one', async () => {
    const c = h.controller;
    const v = await launchReady(c, { executor: 'pvc', agent: 'sleeper' });
    const check = async (): Promise<string> => {
      const nonce = await recordedNonce(h.dataDir, v.id);
      expect(nonce).toMatch(/^[0-9a-f]{64}$/);
      // every process's environment: PID 1's as it started, and the agent's, which agentctl's own (the
      // env files, loaded by the Node pre-start after the container started) is passed on to
      const r = await execText(c, v.id, ['sh', '-c', 'cat /run/berth/auth.env; for e in /proc/[0-9]*/environ; do tr "\\0" "\\n" <"$e" 2>/dev/null; done; ls -a /run/berth; env; cat /run/berth/* 2>/dev/null; :']);
      expect(r.exitCode).toBe(0);
      expect(r.stdout, "the exec saw the agent's environment, with the session's variables").toContain(`BERTH_SESSION_ID=${v.id}`);
      expect(r.stdout, 'the nonce is nowhere an agent can read').not.toContain(nonce);
      expect(r.stdout).not.toMatch(/AGENTCTL_BOOTSTRAP_NONCE=/);
      expect(r.stdout.split('\n'), 'agentctl removed the nonce file').not.toContain('nonce');
      return nonce;
    };
    const first = await check();
    expect((await c.stop(v.id)).state).toBe('stopped');
    expect((await c.resume(v.id)).state).toBe('ready');
    const second = await check();
    expect(second, 'a new Pod, a new nonce').not.toBe(first);
    await c.remove(v.id);
  });

  it('the stop of an empty_dir session ends the daemon the agent left behind; the Pod stays', async () => {
    const c = h.controller;
    const v = await launchReady(c, { executor: 'ephemeral', agent: 'daemonizer' });
    await waitForOutput(c, v.id, /agent started/);
    const [pod] = (await h.core.listNamespacedPod({ namespace: h.ns.name, labelSelector: `berth.dev/session-id=${v.id}` })).items;
    const name = pod?.metadata?.name ?? '';
    const ps = async (): Promise<string> => (await execInPod(h.admin, { namespace: h.ns.name, pod: name, container: 'agent', command: ['sh', '-c', PROCESS_LIST] })).stdout;
    expect(await ps()).toContain('sleep 1000');

    expect((await c.stop(v.id)).state).toBe('stopped');
    const after = await ps();
    expect(after, 'agentctl still runs in the kept Pod').toMatch(/agentctl/);
    expect(after, 'the setsid daemon is gone').not.toContain('sleep 1000');
    await c.remove(v.id);
  });
});
