/**
 * ACP sessions end to end: the real built CLI against a real `berth serve` (local executor, real
 * agentctl, the built-in `demo-acp` agent speaking the Agent Client Protocol) on a temp data dir.
 * A permission request waits for `berth approve` (`--deny` leaves the file untouched), `berth send`
 * is a new turn, `berth cancel` ends a slow turn, `berth logs` shows the transcript (`-o json` the
 * typed events), and a raw agent keeps its ways.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, makeRepo, removeSessionsAndStop, ROOT, runCli, startServeProcess, tempDir, until } from './helpers.js';

interface View {
  state: string;
  protocol?: string;
  agentProcess: { status: string; turns?: number; turnRunning?: boolean; pendingApprovals?: number } | null;
}


describe('ACP sessions through the CLI', () => {
  let root: string;
  let dataDir: string;
  let repo: string;
  let serve: ChildProcess | undefined;
  let id = '';

  const cli = (...args: string[]) => runCli(args, { dataDir });
  const view = async (): Promise<View> => JSON.parse((await cli('status', id, '-o', 'json')).stdout) as View;
  const transcript = async (): Promise<string> => (await cli('logs', id)).stdout;
  const waitTranscript = (text: string, ms?: number): Promise<string> => until(`"${text}" in the transcript`, async () => ((await transcript()).includes(text) ? transcript() : undefined), ms);
  const waitApprovals = (n: number): Promise<View> => until(`${n} pending approval(s)`, async () => ((await view()).agentProcess?.pendingApprovals === n ? view() : undefined));
  const fileExists = async (name: string): Promise<boolean> => (await cli('exec', id, '--', 'test', '-e', name)).code === 0;

  beforeAll(async () => {
    ensureBuilt();
    root = tempDir('berth-cli-acp-');
    dataDir = join(root, 'data');
    repo = join(root, 'repo');
    makeRepo(repo);
    serve = (await startServeProcess(dataDir)).child;
  });

  afterAll(async () => {
    await removeSessionsAndStop(dataDir, serve);
    rmSync(root, { recursive: true, force: true });
  });

  it('holds the edit until berth approve, then the file exists and the transcript shows the tool call', async () => {
    const launch = await cli('launch', '--repo', repo, '--agent', 'demo-acp', '--name', 'acp', '--prompt', 'please write NOTES-acp.md', '--env', 'BERTH_DEMO_STEP_MS=0');
    expect(launch.code, launch.stderr).toBe(0);
    id = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
    expect(id, launch.stdout).not.toBe('');

    const waiting = await waitApprovals(1);
    expect(waiting).toMatchObject({ state: 'ready', protocol: 'acp', agentProcess: { status: 'running', turns: 1, turnRunning: true, pendingApprovals: 1 } });
    expect((await cli('status', id)).stdout).toContain(`demo-acp (running, ACP, 1 turn, turn running, 1 tool call, 1 approval pending (berth approve ${id}))`);
    expect((await cli('ls')).stdout).toMatch(new RegExp(`${id}\\s+acp\\s+ready\\s+demo-acp\\s+waits for approval \\(1\\)`));
    expect(await transcript()).toContain(`?? permission requested (perm-1): Write NOTES-acp.md [Allow / Allow all edits / Deny] (answer: berth approve ${id} [--deny])`);
    expect(await fileExists('NOTES-acp.md'), 'nothing is written before the answer').toBe(false);

    const approve = await cli('approve', id);
    expect(approve.code, approve.stderr).toBe(0);
    expect(approve.stdout).toBe('Allowed: Write NOTES-acp.md (request perm-1).\n');
    const text = await waitTranscript('== turn 1 ended');
    expect(text).toContain('>> turn 1: please write NOTES-acp.md\n');
    expect(text).toContain('tool: Write NOTES-acp.md [edit] (pending)\n');
    expect(text).toContain('  +Written by Berth\'s demo ACP agent for: please write NOTES-acp.md\n');
    expect(text).toContain('-- permission perm-1 (Write NOTES-acp.md): Allow (allow_once), by a person\n');
    expect(text).toContain('tool: Write NOTES-acp.md: completed\n');
    expect(text).toMatch(/== turn 1 ended: end_turn \(tokens: in \d+, out 42, total \d+\)\n/);
    const cat = await cli('exec', id, '--', 'cat', 'NOTES-acp.md');
    expect(cat.stdout).toContain("Written by Berth's demo ACP agent for: please write NOTES-acp.md");
    expect((await view()).agentProcess).toMatchObject({ turns: 1, turnRunning: false, pendingApprovals: 0, usage: { toolCalls: 1, outputTokens: 42, context: { size: 200_000 }, cost: null } });
    expect((await cli('status', id)).stdout).toMatch(/demo-acp \(running, ACP, 1 turn, 1 tool call, \d+ tokens \(in \d+, out 42\)\)/);

    const json = await cli('logs', '-o', 'json', id);
    const events = json.stdout.trim().split('\n').map((l) => JSON.parse(l) as { seq: number; event: { type: string } });
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i));
    expect(events.map((e) => e.event.type)).toEqual(expect.arrayContaining(['session', 'prompt', 'update', 'permission', 'permission_answer', 'turn_end']));
    const later = await cli('logs', '-o', 'json', '--from', '3', id);
    expect(later.stdout.trim().split('\n')).toHaveLength(events.length - 3);

    const nothing = await cli('approve', id);
    expect(nothing.code).toBe(4);
    expect(nothing.stderr).toContain('no permission request is pending');
  });

  it('berth send starts a second turn in the same conversation; --deny leaves the file untouched', async () => {
    const send = await cli('send', id, 'now write DENIED.md');
    expect(send.code, send.stderr).toBe(0);
    await waitApprovals(1);
    const deny = await cli('approve', '--deny', id);
    expect(deny.code, deny.stderr).toBe(0);
    expect(deny.stdout).toBe('Denied: Write DENIED.md (request perm-2).\n');
    const text = await waitTranscript('== turn 2 ended');
    expect(text).toContain('>> turn 2: now write DENIED.md\n');
    expect(text).toContain('-- permission perm-2 (Write DENIED.md): Deny (reject_once), by a person\n');
    expect(text).toContain('tool: Write DENIED.md: failed\n');
    expect(text.match(/== ACP session /g), 'one ACP session for both turns').toHaveLength(1);
    expect(await fileExists('DENIED.md')).toBe(false);
    const eof = await cli('send', '--eof', id);
    expect(eof.code).toBe(4);
  });

  it('berth cancel ends a slow turn as cancelled; the agent takes the next turn', async () => {
    expect((await cli('send', id, 'a slow one')).code).toBe(0);
    await waitTranscript('>> turn 3: a slow one');
    const busy = await cli('send', id, 'too early');
    expect(busy.code, 'one turn at a time').toBe(4);
    const cancel = await cli('cancel', id);
    expect(cancel.code, cancel.stderr).toBe(0);
    await waitTranscript('== turn 3 ended: cancelled', 10_000);
    const again = await cli('cancel', id);
    expect(again.code).toBe(4);
    expect(again.stderr).toContain('no turn is running');
    expect((await cli('send', id, 'hello')).code).toBe(0);
    await waitTranscript('== turn 4 ended: end_turn');
  });

  it('berth logs -f follows the transcript live and ends when the agent exits', async () => {
    const follower = spawn(process.execPath, [CLI, '--data-dir', dataDir, 'logs', '-f', id], { cwd: ROOT, env: { ...process.env, BERTH_DATA_DIR: '' } });
    let followed = '';
    follower.stdout.on('data', (d: Buffer) => (followed += d.toString()));
    const exited = new Promise<number | null>((resolve) => follower.once('close', (code) => resolve(code)));
    await until('logs -f to catch up', async () => (followed.includes('== turn 4 ended') ? true : undefined));
    expect((await cli('send', id, 'followed turn')).code).toBe(0);
    await until('logs -f to show the new turn', async () => (followed.includes('== turn 5 ended: end_turn') ? true : undefined));
    expect(followed).toContain('>> turn 5: followed turn\n');
    expect((await cli('stop', id)).code).toBe(0);
    expect(await exited).toBe(0);
    expect((await cli('resume', id)).code).toBe(0);
  });

  it('leaves a raw agent as it was: stdin input, raw output, no ACP operations', async () => {
    const launch = await cli('launch', '--repo', repo, '--agent', 'demo', '--name', 'raw', '--prompt', 'raw task', '--env', 'BERTH_DEMO_STEP_MS=0');
    expect(launch.code, launch.stderr).toBe(0);
    const raw = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
    const status = JSON.parse((await cli('status', raw, '-o', 'json')).stdout) as View;
    expect(status.protocol).toBe('raw');
    expect(status.agentProcess?.pendingApprovals).toBeUndefined();
    const logs = await until('the raw agent output', async () => {
      const out = (await cli('logs', raw)).stdout;
      return out.includes('agent> ready for instructions') ? out : undefined;
    });
    expect(logs).toContain('agent> task: raw task');
    const cancel = await cli('cancel', raw);
    expect(cancel.code).toBe(4);
    expect(cancel.stderr).toContain("is not an ACP agent");
    expect((await cli('approve', raw)).code).toBe(4);
    expect((await cli('send', raw, 'status')).code).toBe(0);
    expect((await cli('rm', raw)).code).toBe(0);
  });
});
