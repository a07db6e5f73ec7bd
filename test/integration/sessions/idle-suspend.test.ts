/**
 * Idle suspension on the local executor with a real agentctl and real agents (`idle: {suspend_after:
 * 2s}` on a profile, shortened for the test): a quiet session is suspended (its agentctl stopped, the
 * workspace kept, `suspended` with when and why), while sessions launched before it and busy all
 * along are not: an agent whose child process runs (a long tool call), a session with an open shell.
 * Reads (list, get, logs) leave the suspended session asleep; `send` wakes it and the text reaches
 * the agent; exec wakes it too. A session whose agent has ended is not suspended (waking is a
 * resume, which would run that agent again). No sleeps decide anything: the quiet session, launched
 * last, is the proof that the others were asked over a longer window.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createController, type Controller, type SessionView } from '../../../src/controller/index.js';
import { agentctlBundle, agentctlPids, execText, FAST_AGENT_ENV, makeRepo, outputSoFar, teardownController, tempDir, testConfig, until, waitForOutput } from './helpers.js';

const PROFILE = 'napper';

describe('idle suspension (local executor, real agentctl)', () => {
  let work: string;
  let dataDir: string;
  let repo: string;
  let c: Controller;

  beforeAll(async () => {
    work = tempDir('idle');
    dataDir = join(work, 'data');
    const agentctlPath = agentctlBundle(work);
    repo = makeRepo(work, 'repo', 'marker-idle');
    const config = testConfig(
      {
        sleeper: { command: ['sh', '-c', 'echo working; sleep 120; echo done'] },
        finisher: { command: ['sh', '-c', 'echo finished'] },
        // output and no input: printing is activity (a build that logs as it goes is not idle)
        chatty: { command: ['sh', '-c', 'while :; do echo tick; sleep 0.3; done'] },
      },
      { profiles: { [PROFILE]: { executor: 'local', idle: { suspend_after: '2s' } } } },
    );
    c = await createController({ dataDir, agentctlPath, config, env: {} });
    await c.recover();
  });

  afterAll(() => teardownController(c, dataDir, work, 'no agentctl or agent process may outlive its session'));

  const launchReady = async (req: Parameters<Controller['launch']>[0]): Promise<SessionView> => {
    const launched = await c.launch({ repository: { path: repo }, executor: PROFILE, ...req });
    const ready = await c.waitUntilSettled(launched.id);
    expect(ready.state, JSON.stringify(ready.error)).toBe('ready');
    return ready;
  };

  it('suspends a quiet session but none that is busy; reads leave it asleep; send and exec wake it', async () => {
    const toolCall = await launchReady({ agent: 'sleeper', name: 'tool-call' });
    await waitForOutput(c, toolCall.id, /working/);
    const finished = await launchReady({ agent: 'finisher', name: 'finished' });
    await waitForOutput(c, finished.id, /finished/);
    const shelled = await launchReady({ env: FAST_AGENT_ENV, name: 'shelled' });
    const shell = await c.openShell(shelled.id, { rows: 24, cols: 80 });
    const screen = (async () => {
      for await (const chunk of shell.output) void chunk; // read to its end, or the shell cannot finish
    })();
    const chatty = await launchReady({ agent: 'chatty', name: 'chatty' });
    await waitForOutput(c, chatty.id, /tick/);
    // an ACP agent waiting for a person to approve its edit
    const asking = await launchReady({ agent: 'demo-acp', env: FAST_AGENT_ENV, prompt: 'write NOTES.md', name: 'asking' });
    await until(async () => ((await c.get(asking.id)).agentProcess?.pendingApprovals === 1 ? true : undefined), 'the permission request pending', 30_000);
    const quiet = await launchReady({ env: FAST_AGENT_ENV, name: 'quiet' });
    await waitForOutput(c, quiet.id, /ready for instructions/);
    const pidsBefore = agentctlPids(dataDir).length;

    const suspended = await until(async () => {
      const v = await c.get(quiet.id);
        return v.state === 'suspended' ? v : undefined;
    }, 'the quiet session suspended', 60_000);
    const stage = suspended.stages.find((s) => s.name === 'suspended');
    expect(stage).toMatchObject({ status: 'succeeded', reason: 'Idle' });
    expect(stage?.message).toMatch(/^suspended at .*: idle since .* \(2s without a turn, a process the agent started, a shell, exec, input or output\); send, exec or shell wake it$/);
    expect(suspended.agentProcess?.status ?? 'none', 'no agent runs while it sleeps').not.toBe('running');
    expect(agentctlPids(dataDir).length, "the quiet session's agentctl was stopped").toBe(pidsBefore - 1);
    expect(existsSync(join(suspended.workspacePath ?? '/nonexistent', 'NOTES.md')), 'the workspace is kept').toBe(true);

    // launched before the quiet one and asked over at least as long: still running
    expect((await c.get(toolCall.id)).state, 'an agent with a child process at work (a long tool call) is not idle').toBe('ready');
    expect((await c.get(shelled.id)).state, 'a session with an open shell is not idle').toBe('ready');
    expect((await c.get(chatty.id)).state, 'an agent that keeps printing (no input) is not idle').toBe('ready');
    expect((await c.get(asking.id)).state, 'an agent waiting for an approval is not idle').toBe('ready');
    // waking is a resume, which would start an ended agent again: such a session is left alone
    expect(await c.get(finished.id), 'a session whose agent has ended is not suspended').toMatchObject({ state: 'ready', agentProcess: { status: 'exited' } });

    // reads do not wake it
    await c.list();
    expect(await outputSoFar(c, quiet.id)).toMatch(/ready for instructions/);
    expect((await c.get(quiet.id)).state).toBe('suspended');

    // a real action does, and completes
    await c.sendInput(quiet.id, 'good morning\n');
    expect((await c.get(quiet.id)).state).toBe('ready');
    await waitForOutput(c, quiet.id, /you said: good morning/);

    // suspended again once quiet, then an exec wakes it and runs
    await until(async () => ((await c.get(quiet.id)).state === 'suspended' ? true : undefined), 'suspended again', 60_000);
    const r = await execText(c, quiet.id, ['cat', 'NOTES.md']);
    expect(r.exitCode).toBe(0);
    expect((await c.get(quiet.id)).state).toBe('ready');

    // once answered (and its turn over), the asking session is idle like any other
    await c.approve(asking.id, { deny: true });
    await until(async () => ((await c.get(asking.id)).state === 'suspended' ? true : undefined), 'the answered session suspended', 60_000);

    shell.write('exit\n');
    await shell.exit;
    await screen;
    await c.stop(chatty.id);
  }, 180_000);

  it('a stopped session is not woken by an action: stop means stopped', async () => {
    const s = await launchReady({ env: FAST_AGENT_ENV, name: 'stopper' });
    await c.stop(s.id);
    await expect(c.sendInput(s.id, 'hello\n')).rejects.toThrow(/resume it first/);
    expect((await c.get(s.id)).state).toBe('stopped');
  });
});
