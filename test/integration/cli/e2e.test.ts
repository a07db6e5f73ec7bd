/**
 * The real built CLI (`node dist/berth.js`) against a real `berth serve` (the real controller,
 * local executor, real agentctl and the demo agent) on a temp data dir.
 */
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { clientForDataDir } from '../../../src/api/node-client.js';
import { ensureBuilt, runCli, startServeProcess, stopProcess, tempDir } from './helpers.js';

function makeRepo(dir: string): void {
  mkdirSync(dir, { recursive: true });
  const git = (...args: string[]): void => {
    execFileSync('git', ['-c', 'user.email=demo@example.com', '-c', 'user.name=demo', ...args], { cwd: dir, stdio: 'ignore' });
  };
  git('init', '-q', '-b', 'main');
  writeFileSync(join(dir, 'README.md'), '# demo\n');
  git('add', '.');
  git('commit', '-qm', 'init');
}

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
    const left = await runCli(['ls', '-o', 'json'], { dataDir });
    if (left.code === 0) {
      for (const s of (JSON.parse(left.stdout) as { sessions: { id: string }[] }).sessions) await runCli(['rm', '--force', s.id], { dataDir });
    }
    await stopProcess(serve);
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

    // The agent writes asynchronously: poll (bounded) until its task line is in the log.
    let logs = '';
    for (let i = 0; i < 40 && !logs.includes('agent> task: hello from e2e'); i++) {
      logs = (await runCli(['logs', id], { dataDir })).stdout;
      if (!logs.includes('agent> task')) await new Promise((r) => setTimeout(r, 250));
    }
    expect(logs).toContain('agent> task: hello from e2e');

    const gitStatus = await runCli(['exec', id, '--', 'git', 'status'], { dataDir });
    expect(gitStatus.code).toBe(0);
    expect(gitStatus.stdout).toContain('On branch main');

    const seven = await runCli(['exec', id, '--', 'sh', '-c', 'echo out; echo err >&2; exit 7'], { dataDir });
    expect(seven.code, 'exec returns the command exit code').toBe(7);
    expect(seven.stdout).toBe('out\n');
    expect(seven.stderr).toBe('err\n');

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
    expect(parse((await runCli(['status', id, '-o', 'yaml'], { dataDir })).stdout)).toMatchObject({ id, name: 'e2e' });
    expect((await runCli(['ls', '-o', 'wide'], { dataDir })).stdout).toMatch(new RegExp(`${id}\\s+e2e\\s+ready`));

    const stop = await runCli(['stop', id], { dataDir });
    expect(stop.code).toBe(0);
    expect(stop.stdout).toContain('stopped');
    const refused = await runCli(['exec', id, '--', 'true'], { dataDir });
    expect(refused.code, 'exec on a stopped session is a state conflict').toBe(4);
    expect(refused.stderr).toContain('stopped');

    const resume = await runCli(['resume', id], { dataDir });
    expect(resume.code, resume.stderr).toBe(0);
    expect(resume.stdout).toContain(`Session ${id} is ready`);
    expect((await runCli(['exec', id, '--', 'true'], { dataDir })).code).toBe(0);

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
    const seen = (text: string): Promise<void> =>
      out.includes(text) ? Promise.resolve() : new Promise((resolve) => (waiter = { text, resolve }));
    const conn = client.shell(id, {
      rows: 24,
      cols: 80,
      onOutput: (c) => {
        out += Buffer.from(c.data).toString();
        if (waiter && out.includes(waiter.text)) waiter.resolve();
      },
    });
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

  it('refuses a second serve on the same data dir', async () => {
    const r = await runCli(['serve', '--port', '0'], { dataDir });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/another berth serve \(pid \d+\) is already running on data dir/);
  });

  it('requires the bearer token on the API (401 without or with a wrong one)', async () => {
    const url = `http://127.0.0.1:${port}/api/v1/sessions`;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    const token = readFileSync(join(dataDir, 'api-token'), 'utf8').trim();
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
    expect(r.stderr).toContain('hint: start it with: berth serve');
  });

  it('doctor reports every check ok against the running serve', async () => {
    const r = await runCli(['doctor'], { dataDir });
    expect(r.stdout).toMatch(/^ok\s+serve\s+reachable/m);
    expect(r.stdout).toMatch(/^ok\s+node/m);
    expect(r.code, r.stdout).toBe(0);
  });
});
