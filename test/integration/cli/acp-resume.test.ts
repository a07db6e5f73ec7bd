/**
 * An ACP conversation survives `berth stop` / `berth resume`: the real built CLI against a real
 * `berth serve` (local executor, sandboxed agentctl, the built-in `demo-acp` agent, which keeps
 * its conversations in its per-session state directory). The resume says the conversation was
 * loaded, the transcript shows the earlier conversation replayed, the launch prompt is not run
 * again, and the next turn continues the same conversation.
 */
import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, makeRepo, removeSessionsAndStop, runCli, startServeProcess, tempDir, until } from './helpers.js';

interface Event {
  event: { type: string; text?: string; resume?: { from: string; loaded: boolean } };
}


describe('ACP conversations across stop and resume (local)', () => {
  let root: string;
  let dataDir: string;
  let repo: string;
  let serve: ChildProcess | undefined;

  const cli = (...args: string[]) => runCli(args, { dataDir });
  const transcript = async (id: string): Promise<string> => (await cli('logs', id)).stdout;
  const events = async (id: string): Promise<Event[]> =>
    (await cli('logs', id, '-o', 'json')).stdout
      .split('\n')
      .filter((l) => l.trim() !== '')
      .map((l) => JSON.parse(l) as Event);
  const waitTranscript = (id: string, text: string): Promise<string> => until(`"${text}" in the transcript`, async () => ((await transcript(id)).includes(text) ? transcript(id) : undefined));

  beforeAll(async () => {
    ensureBuilt();
    root = tempDir('berth-cli-acp-resume-');
    dataDir = join(root, 'data');
    repo = join(root, 'repo');
    makeRepo(repo);
    serve = (await startServeProcess(dataDir)).child;
  });

  afterAll(async () => {
    await removeSessionsAndStop(dataDir, serve);
    rmSync(root, { recursive: true, force: true });
  });

  it('berth resume loads the conversation: no second first turn, the next turn knows the first', async () => {
    const launch = await cli('launch', '--repo', repo, '--agent', 'demo-acp', '--prompt', 'please write FIRST.md', '--env', 'BERTH_DEMO_STEP_MS=0');
    expect(launch.code, launch.stderr).toBe(0);
    const id = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
    expect(launch.stdout).toContain('berth-demo-acp-agent');
    expect(launch.stdout).toContain('ACP session open');
    expect((await cli('approve', id)).code).toBe(0);
    await waitTranscript(id, '== turn 1 ended: end_turn');

    expect((await cli('stop', id)).code).toBe(0);
    const resumed = await cli('resume', id);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stdout).toMatch(/conversation continued \(session\/load of the earlier run's session demo-[0-9a-f]+\)/);

    const after = await transcript(id);
    expect(after).toContain('== earlier conversation (replayed by the agent):');
    expect(after).toContain('you: please write FIRST.md');
    expect(after).toContain('(conversation of agent-1 continued)');
    // the launch prompt was not sent again
    expect((await events(id)).filter((e) => e.event.type === 'prompt')).toEqual([]);

    expect((await cli('send', id, 'what did I ask first?')).code).toBe(0);
    const second = await waitTranscript(id, '== turn 1 ended');
    expect(second).toContain('This conversation had 1 earlier turn(s); the first was: please write FIRST.md');
    // usage counts the whole conversation: the first run's tool call and tokens carried over
    const usage = (JSON.parse((await cli('status', id, '-o', 'json')).stdout) as { agentProcess: { usage?: { toolCalls: number; outputTokens: number | null } } }).agentProcess.usage;
    expect(usage).toMatchObject({ toolCalls: 1, outputTokens: 84 });
    // the file of the first run is still there, written once
    const cat = await cli('exec', id, '--', 'grep', '-c', 'Written by', 'FIRST.md');
    expect(cat.stdout.trim()).toBe('1');
  });
});
