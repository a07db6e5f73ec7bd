/**
 * The real built CLI (`node dist/berth.js`) against a real `berth serve` (the real controller,
 * local executor, real agentctl and the demo agent) on a temp data dir.
 */
import type { ChildProcess } from 'node:child_process';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { clientForDataDir } from '../../../src/server/node-client.js';
import { CLI, ensureBuilt, makeRepo, removeSessionsAndStop, ROOT, runCli, startServeProcess, stopProcess, tempDir } from './helpers.js';


describe('berth CLI against a real berth serve', () => {
  let root: string;
  let dataDir: string;
  let repo: string;
  let serve: ChildProcess | undefined;
  let port: number;

  beforeAll(async () => {
    ensureBuilt();
    root = tempDir('berth-cli-e2e-');
    dataDir = join(root, 'data');
    repo = join(root, 'repo');
    makeRepo(repo);
    const started = await startServeProcess(dataDir);
    serve = started.child;
    port = started.port;
  });

  afterAll(async () => {
    // Remove what is left (stops agentctl and the agent) before stopping serve, then the dir.
    await removeSessionsAndStop(dataDir, serve);
    rmSync(root, { recursive: true, force: true });
  });

  it('runs the main flow: launch → logs → exec → status → stop → resume → rm', async () => {
    const launch = await runCli(['launch', '--repo', repo, '--agent', 'demo', '--name', 'e2e', '--prompt', 'hello from e2e', '--env', 'BERTH_DEMO_STEP_MS=0'], { dataDir });
    expect(launch.stderr).toBe('');
    expect(launch.code).toBe(0);
    const id = /Session (\S+) is ready/.exec(launch.stdout)?.[1];
    expect(id, launch.stdout).toBeDefined();
    if (!id) return;
    for (const stage of ['workspace', 'agentctl_start', 'agentctl_connect', 'agent_start']) expect(launch.stdout).toMatch(new RegExp(`✓ ${stage}\\s+\\d`));
    expect(launch.stdout).toContain(`berth shell ${id}`);
    expect(launch.stdout).toContain(`berth logs -f ${id}`);

    // The agent writes asynchronously: poll (bounded) until it has done its scripted steps.
    let logs = '';
    for (let i = 0; i < 40 && !logs.includes('agent> ready for instructions'); i++) {
      logs = (await runCli(['logs', id], { dataDir })).stdout;
      if (!logs.includes('agent> ready for instructions')) await new Promise((r) => setTimeout(r, 250));
    }
    expect(logs).toContain('agent> task: hello from e2e');
    expect(logs).toContain('agent> created NOTES.md');

    const gitStatus = await runCli(['exec', id, '--', 'git', 'status'], { dataDir });
    expect(gitStatus.code).toBe(0);
    expect(gitStatus.stdout).toContain('On branch main');

    const seven = await runCli(['exec', id, '--', 'sh', '-c', 'echo out; echo err >&2; exit 7'], { dataDir });
    expect(seven.code, 'exec returns the command exit code').toBe(7);
    expect(seven.stdout).toBe('out\n');
    expect(seven.stderr).toBe('err\n');

    const missing = await runCli(['exec', id, '--', 'nonexistent-cmd'], { dataDir });
    expect(missing.code, 'a command that is not found exits 127, as in a shell').toBe(127);
    expect(missing.stderr).toBe('berth: exec: nonexistent-cmd: command not found\n');
    const badCwd = await runCli(['exec', '--cwd', 'no-such-dir', id, '--', 'true'], { dataDir });
    expect(badCwd.code).not.toBe(0);
    expect(badCwd.stderr, 'no internal agentctl request line').not.toContain('agentctl ');

    const piped = await runCli(['exec', '-i', id, '--', 'wc', '-c'], { dataDir, input: 'twelve bytes' });
    expect(piped.stdout.trim()).toBe('12');

    const shell = await runCli(['shell', id], { dataDir, input: 'tty; exit 4\n' });
    expect(shell.code, shell.stderr).toBe(4);
    expect(shell.stdout).toMatch(/\/dev\/pts\/\d+/);
    const exitOnly = await runCli(['shell', id], { dataDir, input: 'exit 4\n' });
    expect(exitOnly.code, 'printf "exit 4\\n" | berth shell ID').toBe(4);

    const status = await runCli(['status', id], { dataDir });
    expect(status.code).toBe(0);
    expect(status.stdout).toMatch(/State:\s+ready/);
    expect(status.stdout).toMatch(/agent_start\s+succeeded/);
    const json = JSON.parse((await runCli(['status', id, '-o', 'json'], { dataDir })).stdout) as { id: string; state: string; stages: unknown[] };
    expect(json).toMatchObject({ id, state: 'ready' });
    expect(json.stages).toHaveLength(4);
    const launchTotal = /is ready \(total (\S+)\)\./.exec(launch.stdout)?.[1];
    expect(launchTotal, 'launch reports the total of its stages').toBeDefined();
    expect(status.stdout, 'status shows the same total as launch').toContain(`Total: ${launchTotal}\n`);
    expect(parse((await runCli(['status', id, '-o', 'yaml'], { dataDir })).stdout)).toMatchObject({ id, name: 'e2e' });
    expect((await runCli(['ls', '-o', 'wide'], { dataDir })).stdout).toMatch(new RegExp(`${id}\\s+e2e\\s+ready`));

    const stop = await runCli(['stop', id], { dataDir });
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain('stopped');
    const refused = await runCli(['exec', id, '--', 'true'], { dataDir });
    expect(refused.code, 'exec on a stopped session is a state conflict').toBe(4);
    expect(refused.stderr).toContain('stopped');

    // `logs` of a stopped session shows what the last agent run recorded (docker logs of a stopped container).
    const stoppedLogs = await runCli(['logs', id], { dataDir });
    expect(stoppedLogs.code, stoppedLogs.stderr).toBe(0);
    expect(stoppedLogs.stdout).toContain(logs);
    const followStopped = await runCli(['logs', '-f', id], { dataDir });
    expect(followStopped.code, 'nothing to follow: it ends after the recorded output').toBe(0);
    expect(followStopped.stdout).toBe(stoppedLogs.stdout);
    const noPrevious = await runCli(['logs', '--previous', id], { dataDir });
    expect(noPrevious.code, 'the first run has no previous one').toBe(4);
    expect(noPrevious.stderr).toContain(`session '${id}' has no previous agent run: 'agent-1' is its first agent run`);

    const resume = await runCli(['resume', id], { dataDir });
    expect(resume.code, resume.stderr).toBe(0);
    expect(resume.stdout).toContain(`Session ${id} is ready`);
    expect((await runCli(['exec', id, '--', 'true'], { dataDir })).code).toBe(0);
    const resumedView = JSON.parse((await runCli(['status', id, '-o', 'json'], { dataDir })).stdout) as { agentProcess: { id: string } };
    expect(resumedView.agentProcess.id).toBe('agent-2');

    // `logs` follows the new run; `logs --previous` (API: ?previous=true) still reaches the first one.
    let current = '';
    for (let i = 0; i < 40 && !current.includes('agent> ready for instructions'); i++) {
      current = (await runCli(['logs', id], { dataDir })).stdout;
      if (!current.includes('agent> ready for instructions')) await new Promise((r) => setTimeout(r, 250));
    }
    expect(current).toContain('agent> updated NOTES.md');
    expect(current).not.toContain('agent> created NOTES.md');
    const previous = await runCli(['logs', '-p', id], { dataDir });
    expect(previous.code, previous.stderr).toBe(0);
    expect(previous.stdout).toBe(stoppedLogs.stdout);
    const previousFrom = await runCli(['logs', '--previous', '--from', '1', id], { dataDir });
    expect(previousFrom.code, previousFrom.stderr).toBe(0);
    expect(previousFrom.stdout.length).toBeLessThan(stoppedLogs.stdout.length);
    expect(stoppedLogs.stdout.endsWith(previousFrom.stdout), '--from applies to the previous run').toBe(true);

    const rm = await runCli(['rm', id], { dataDir });
    expect(rm.code, rm.stderr).toBe(0);
    const gone = await runCli(['status', id], { dataDir });
    expect(gone.code).toBe(3);
  });

  it('streams a shell through agentctl: typed input is echoed by the PTY and a resize reaches `stty size`', async () => {
    const launch = await runCli(['launch', '--repo', repo, '--agent', 'demo', '--name', 'pty', '--env', 'BERTH_DEMO_STEP_MS=0'], { dataDir });
    const id = /Session (\S+) is ready/.exec(launch.stdout)?.[1];
    expect(id, launch.stdout + launch.stderr).toBeDefined();
    if (!id) return;
    const client = clientForDataDir(dataDir);
    if (!client) throw new Error('no serve.json');
    let out = '';
    let waiter: { text: string; resolve: () => void } | undefined;
    let firstOutput = (): void => {};
    const prompted = new Promise<void>((resolve) => (firstOutput = resolve));
    const seen = (text: string): Promise<void> =>
      out.includes(text) ? Promise.resolve() : new Promise((resolve) => (waiter = { text, resolve }));
    const conn = client.shell(id, {
      rows: 24,
      cols: 80,
      onOutput: (c) => {
        out += Buffer.from(c.data).toString();
        firstOutput();
        if (waiter && out.includes(waiter.text)) waiter.resolve();
      },
    });
    // A person types once the prompt shows. Keys sent earlier reach a terminal still in cooked mode:
    // the line discipline echoes them, then the shell prints its prompt amid them (CI saw
    // `echo typed-$((6# *7))`), which is right for a PTY but not what this checks.
    await prompted;
    // One key at a time, as a person types: each is its own frame on the stream socket.
    for (const key of 'echo typed-$((6*7))\n') conn.write(Buffer.from(key));
    await seen('typed-42');
    expect(out, 'the PTY echoes the typed command line').toContain('echo typed-$((6*7))');
    conn.write(Buffer.from('echo "size=$(stty size)"\n'));
    await seen('size=24 80');
    conn.resize(33, 111);
    conn.write(Buffer.from('echo "size=$(stty size)"; exit 6\n'));
    expect(await conn.done).toEqual({ exitCode: 6, signal: null });
    expect(out, 'a resize lands before the input typed after it').toContain('size=33 111');
    expect((await runCli(['rm', id], { dataDir })).code).toBe(0);
  });

  it('exits 3 naming the id for an unknown session', async () => {
    const r = await runCli(['status', 'no-such-session'], { dataDir });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain("session not found: 'no-such-session'");
  });

  it('exits 2 naming the field when the controller rejects the launch', async () => {
    const r = await runCli(['launch', '--repo', repo, '--agent', 'no-such-agent'], { dataDir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('agent');
  });

  it('says which port is taken when serve cannot listen', async () => {
    const other = join(root, 'port-taken');
    const r = await runCli(['serve', '--port', String(port)], { dataDir: other });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`berth: port ${port} is in use (another berth serve on another data dir?); pick one with --port N or --port 0`);
  });

  it('refuses a second serve on the same data dir', async () => {
    const r = await runCli(['serve', '--port', '0'], { dataDir });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/another berth serve \(pid \d+\) is already running on data dir/);
  });

  it('requires the bearer token on the API (401 without or with a wrong one)', async () => {
    const url = `http://127.0.0.1:${port}/api/v1/sessions`;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const token = readFileSync(join(dataDir, 'state', 'api-token'), 'utf8').trim();
    expect((await fetch(url, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${port}/health`)).status).toBe(200);
  });

  it('reports a malformed config naming the field, before taking the data dir', async () => {
    const other = join(root, 'bad-config');
    mkdirSync(other);
    const config = join(other, 'berth.yaml');
    writeFileSync(config, 'agents:\n  mine:\n    command: not-a-list\n');
    const r = await runCli(['serve', '--port', '0', '--config', config], { dataDir: other });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('invalid config: agents.mine.command');
    const doctor = await runCli(['doctor', '--config', config], { dataDir: other });
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/fail\s+config\s+agents\.mine\.command/);
  });

  it('exits 5 with a hint when no serve runs for the data dir', async () => {
    const r = await runCli(['ls'], { dataDir: join(root, 'empty') });
    expect(r.code).toBe(5);
    expect(r.stderr, 'the hint repeats the --data-dir that was passed').toContain(`hint: start it with: berth --data-dir ${join(root, 'empty')} serve`);
  });

  it('doctor reports every check ok against the running serve', async () => {
    const r = await runCli(['doctor'], { dataDir });
    expect(r.stdout).toMatch(/^ok\s+serve\s+reachable/m);
    expect(r.stdout).toMatch(/^ok\s+node/m);
    expect(r.code, r.stdout).toBe(0);
  });
});

/** Pids of shell wrappers (`sh -c … berth-shell …`) and their `script` running in a workspace under `dataDir`. */
function shellPids(dataDir: string): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const argv = readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0');
      const isShell = (argv[0] === 'sh' && argv[3] === 'berth-shell') || /(^|\/)script$/.test(argv[0] ?? '');
      if (isShell && readlinkSync(`/proc/${name}/cwd`).startsWith(join(dataDir, 'workspaces'))) out.push(Number(name));
    } catch {
      // gone or not readable
    }
  }
  return out;
}

async function waitFor<T>(fn: () => T | undefined, what: string, ms = 15_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Opens a shell through the API and waits until it answers a command. */
async function openShell(dataDir: string, id: string): Promise<void> {
  const client = clientForDataDir(dataDir);
  if (!client) throw new Error('no serve.json');
  let out = '';
  const conn = client.shell(id, { rows: 24, cols: 80, onOutput: (c) => (out += Buffer.from(c.data).toString()) });
  conn.done.catch(() => undefined);
  conn.write(Buffer.from('echo shell-$((40+2))\n'));
  await waitFor(() => (out.includes('shell-42') ? true : undefined), 'the shell to answer');
}

describe('berth CLI when berth serve dies or restarts', () => {
  let root: string;
  let dataDir: string;
  let repo: string;
  let serve: ChildProcess | undefined;

  beforeAll(() => {
    ensureBuilt();
    root = tempDir('berth-cli-e2e-restart-');
    dataDir = join(root, 'data');
    repo = join(root, 'repo');
    makeRepo(repo);
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'berth.yaml'), 'agents:\n  quick:\n    command: ["sh", "-c", "echo quick-agent-done; exit 3"]\n');
  });

  afterAll(async () => {
    serve ??= (await startServeProcess(dataDir)).child;
    await removeSessionsAndStop(dataDir, serve);
    for (const pid of shellPids(dataDir)) process.kill(pid, 'SIGKILL');
    rmSync(root, { recursive: true, force: true });
  });

  it('ends the shells of a SIGKILLed serve when the next serve starts, ends open shells on SIGTERM, and `logs -f` says where to resume', async () => {
    serve = (await startServeProcess(dataDir)).child;
    const launch = await runCli(['launch', '--repo', repo, '--agent', 'demo', '--env', 'BERTH_DEMO_STEP_MS=0'], { dataDir });
    const id = /Session (\S+) is ready/.exec(launch.stdout)?.[1];
    if (!id) throw new Error(launch.stdout + launch.stderr);

    const follower = spawn(process.execPath, [CLI, '--data-dir', dataDir, 'logs', '-f', id], { cwd: ROOT, env: { ...process.env, BERTH_DATA_DIR: '' } });
    let followed = '';
    let followErr = '';
    follower.stdout.on('data', (d: Buffer) => (followed += d.toString()));
    follower.stderr.on('data', (d: Buffer) => (followErr += d.toString()));
    const followerExit = new Promise<number | null>((resolve) => follower.once('close', (code) => resolve(code)));
    await waitFor(() => (followed.includes('ready for instructions') ? true : undefined), 'logs -f to show the agent output');

    await openShell(dataDir, id);
    expect(shellPids(dataDir).length, 'the open shell runs in the workspace').toBeGreaterThan(0);

    serve.kill('SIGKILL');
    await new Promise((r) => serve!.once('exit', r));
    serve = undefined;
    expect(await followerExit, followErr).toBe(5);
    const next = /lost the controller \(.+\); resume with: berth --data-dir (\S+) logs -f --from (\d+) (\S+)\n/.exec(followErr);
    expect(next, followErr).not.toBeNull();
    expect(next?.[1]).toBe(dataDir);
    expect(next?.[3]).toBe(id);

    serve = (await startServeProcess(dataDir)).child;
    await waitFor(() => (shellPids(dataDir).length === 0 ? true : undefined), 'the next serve to end the shells of the dead one');
    // the resume command it printed picks up exactly where the stream stopped
    const resumed = await runCli(['logs', '--from', next?.[2] ?? '0', id], { dataDir });
    expect(followed + resumed.stdout).toBe((await runCli(['logs', id], { dataDir })).stdout);

    await openShell(dataDir, id);
    expect(shellPids(dataDir).length).toBeGreaterThan(0);
    await stopProcess(serve); // SIGTERM: an orderly shutdown
    serve = undefined;
    // the kill is sent before serve exits; the kernel takes a moment to end the processes
    await waitFor(() => (shellPids(dataDir).length === 0 ? true : undefined), 'an orderly shutdown to end the open shells', 3000);
  });

  it('shows an exited agent in ls, ends `logs -f` with its exit code, and resume starts it again (but refuses while it runs)', async () => {
    serve ??= (await startServeProcess(dataDir)).child;
    // An agent that exits at once fails the launch (exit 1, its code and output shown); the session stays.
    const launch = await runCli(['launch', '--repo', repo, '--agent', 'quick'], { dataDir });
    expect(launch.code).toBe(1);
    const id = /the agent of session (\S+) exited with code 3 right after it started/.exec(launch.stderr)?.[1];
    if (!id) throw new Error(launch.stdout + launch.stderr);
    expect(launch.stderr).toContain('  | quick-agent-done\n');

    const logs = await runCli(['logs', '-f', id], { dataDir });
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stdout).toContain('quick-agent-done');
    expect(logs.stderr).toBe('agent exited with code 3\n');

    for (const format of ['table', 'wide']) {
      const ls = await runCli(['ls', '-o', format], { dataDir });
      expect(ls.stdout).toMatch(new RegExp(`${id}\\s+-\\s+ready\\s+quick\\s+exited \\(3\\)`));
    }

    const resume = await runCli(['resume', id], { dataDir });
    expect(resume.code, 'the new agent exits at once again').toBe(1);
    expect(resume.stderr).toContain('exited with code 3 right after it started');
    expect(resume.stdout).toMatch(/✓ agent_start\s+\d/);
    expect(resume.stdout, 'only the agent is started again').not.toMatch(/workspace/);
    const view = JSON.parse((await runCli(['status', id, '-o', 'json'], { dataDir })).stdout) as { agentProcess: { id: string } };
    expect(view.agentProcess.id, 'a new agent process').toBe('agent-2');

    const demo = await runCli(['launch', '--repo', repo, '--agent', 'demo', '--env', 'BERTH_DEMO_STEP_MS=0'], { dataDir });
    const demoId = /Session (\S+) is ready/.exec(demo.stdout)?.[1];
    if (!demoId) throw new Error(demo.stdout + demo.stderr);
    const refused = await runCli(['resume', demoId], { dataDir });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toContain(`session '${demoId}' is already ready (agent running); nothing to resume`);
    expect(refused.stdout, 'no old stage timings').toBe('');
  });
});
