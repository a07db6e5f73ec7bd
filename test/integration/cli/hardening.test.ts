/**
 * Issue 7's bad input and rough edges, through the real built CLI against a real `berth serve`:
 * repositories refused before a session exists, prompt and env limits, prompts on stdin or in a
 * file, unique session names usable as ids, quiet EPIPE, empty words, doctor and a changed
 * berth.yaml, an agent that exits at once, `berth send`, and exit 5 when serve dies mid-command.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, ensureBuilt, makeRepo, removeSessionsAndStop, ROOT, runCli, startServeProcess, tempDir } from './helpers.js';


const CONFIG = `agents:
  quick-fail:
    command: ["sh", "-c", "echo starting up; echo 'error: no API key' >&2; exit 3"]
  chatty:
    command: ["sh", "-c", "i=0; while [ $i -lt 3000 ]; do echo chatty line $i; i=$((i+1)); done; exec sleep 600"]
  from-stdin:
    prompt: stdin
    command: ["sh", "-c", "cat > .prompt-seen; exec sleep 600"]
  from-file:
    prompt: file
    command: ["sh", "-c", "cp \\"$1\\" .prompt-seen; exec sleep 600", "sh", "{{prompt_file}}"]
`;

const idOf = (out: string): string | undefined => /Session (\S+) is ready/.exec(out)?.[1];

async function waitFor<T>(fn: () => Promise<T | undefined> | T | undefined, what: string, ms = 20_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Runs the CLI and calls `onOutput` with the output so far until it returns true (then `act`). */
function runUntil(dataDir: string, args: string[], ready: (out: string) => boolean, act: () => void, input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [CLI, '--data-dir', dataDir, ...args], { cwd: ROOT, env: { ...process.env, BERTH_DATA_DIR: '' }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  let acted = false;
  const check = (): void => {
    if (!acted && ready(stdout + stderr)) {
      acted = true;
      act();
    }
  };
  child.stdout.on('data', (d: Buffer) => ((stdout += d.toString()), check()));
  child.stderr.on('data', (d: Buffer) => ((stderr += d.toString()), check()));
  if (input !== undefined) child.stdin.write(input);
  else child.stdin.end();
  return new Promise((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

describe('berth CLI: bad input and rough edges', () => {
  let root: string;
  let dataDir: string;
  let repo: string;
  let serve: ChildProcess | undefined;

  beforeAll(async () => {
    ensureBuilt();
    root = tempDir('berth-cli-hardening-');
    dataDir = join(root, 'data');
    repo = join(root, 'repo');
    makeRepo(repo, 'hardening');
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(join(dataDir, 'berth.yaml'), CONFIG);
    serve = (await startServeProcess(dataDir)).child;
  });

  afterAll(async () => {
    serve ??= (await startServeProcess(dataDir)).child;
    await removeSessionsAndStop(dataDir, serve);
    rmSync(root, { recursive: true, force: true });
  });

  const sessionCount = async (): Promise<number> => (JSON.parse((await runCli(['ls', '-o', 'json'], { dataDir })).stdout) as { sessions: unknown[] }).sessions.length;

  it('refuses a non-git directory, a plain file, file:///nope and an unknown branch before any session exists', async () => {
    const plainDir = join(root, 'not-git');
    mkdirSync(plainDir, { recursive: true });
    const plainFile = join(root, 'a-file.txt');
    writeFileSync(plainFile, 'x');
    const before = await sessionCount();
    const cases: Array<[string[], RegExp]> = [
      [['--repo', plainDir], /repository\.path: .*not-git is not a git repository git can clone \(fatal: .*\)/],
      [['--repo', plainFile], /repository\.path: .*a-file\.txt is a file, not a git repository/],
      [['--repo', 'file:///nope'], /repository\.url: file:\/\/\/nope cannot be read \(fatal: .*\)/],
      [['--repo', repo, '--branch', 'no-such-branch'], /repository\.branch: no branch or tag 'no-such-branch' in /],
      [['--repo', `file://${repo}`, '--branch', 'no-such-branch'], /repository\.branch: no branch or tag 'no-such-branch' in file:/],
    ];
    for (const [args, message] of cases) {
      const r = await runCli(['launch', ...args, '--agent', 'demo'], { dataDir });
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    expect(await sessionCount(), 'no session row was left by any of them').toBe(before);
  });

  it('refuses an over-limit prompt and env at the API naming the limit, and passes prompts on stdin or in a file', async () => {
    // 1 MiB does not fit on a command line at all: --prompt-file reads it
    const hugeFile = join(root, 'huge-prompt.txt');
    writeFileSync(hugeFile, 'p'.repeat(1024 * 1024));
    const huge = await runCli(['launch', '--repo', repo, '--prompt-file', hugeFile], { dataDir });
    expect(huge.code, huge.stderr).toBe(2);
    expect(huge.stderr).toContain('prompt: is 1048576 bytes; the limit is 98304 bytes (96 KiB)');
    const bigEnv = await runCli(['launch', '--repo', repo, '--env', `BIG=${'x'.repeat(70 * 1024)}`], { dataDir });
    expect(bigEnv.code).toBe(2);
    expect(bigEnv.stderr).toMatch(/env\.BIG: is \d+ bytes; the limit per variable is 65536 bytes/);

    const prompt = `line one\n"quoted" $HOME \`x\`\n${'long '.repeat(10_000)}`;
    for (const agent of ['from-stdin', 'from-file']) {
      const launch = await runCli(['launch', '--repo', repo, '--agent', agent, '--prompt-file', '-'], { dataDir, input: prompt });
      const id = idOf(launch.stdout);
      expect(id, launch.stdout + launch.stderr).toBeDefined();
      const seen = await waitFor(async () => {
        const r = await runCli(['exec', id!, '--', 'cat', '.prompt-seen'], { dataDir });
        return r.code === 0 && r.stdout.length >= prompt.length ? r.stdout : undefined;
      }, `${agent} to receive the prompt`);
      expect(seen, agent).toBe(prompt);
      const status = await runCli(['exec', id!, '--', 'git', 'status', '--porcelain'], { dataDir });
      expect(status.stdout.split('\n').filter((l) => l !== '' && !l.includes('.prompt-seen')), 'the prompt file is hidden from git').toEqual([]);
      await runCli(['rm', '--force', id!], { dataDir });
    }
  });

  it('restricts session names, keeps them unique and takes a name wherever an id goes', async () => {
    for (const bad of ['two\nlines', 'esc\x1b[31m', 'tab\tname', '-dash', 's-0123456789']) {
      const r = await runCli(['launch', '--repo', repo, `--name=${bad}`], { dataDir });
      expect(r.code, JSON.stringify(bad)).toBe(2);
      expect(r.stderr).toContain('name: must');
    }
    const launch = await runCli(['launch', '--repo', repo, '--agent', 'demo', '--name', 'web-1', '--env', 'BERTH_DEMO_STEP_MS=0'], { dataDir });
    const id = idOf(launch.stdout);
    expect(id, launch.stderr).toBeDefined();
    const again = await runCli(['launch', '--repo', repo, '--name', 'web-1'], { dataDir });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`name: 'web-1' is taken by session ${id}`);

    const status = await runCli(['status', 'web-1', '-o', 'json'], { dataDir });
    expect(status.code, status.stderr).toBe(0);
    expect(JSON.parse(status.stdout)).toMatchObject({ id, name: 'web-1' });
    const exec = await runCli(['exec', 'web-1', '--', 'git', 'rev-parse', '--abbrev-ref', 'HEAD'], { dataDir });
    expect(exec.stdout).toBe('main\n');
    const shell = await runCli(['shell', 'web-1'], { dataDir, input: 'exit 6\n' });
    expect(shell.code, 'the shell WebSocket takes the name too').toBe(6);
    const unknown = await runCli(['status', 'no-such-name'], { dataDir });
    expect(unknown.code).toBe(3);
    expect(unknown.stderr).toContain("session not found: 'no-such-name'");
  });

  it('sends input to the agent with berth send, and exits quietly when its reader goes away (| head -1)', async () => {
    const launch = await runCli(['launch', '--repo', repo, '--agent', 'demo', '--env', 'BERTH_DEMO_STEP_MS=0'], { dataDir });
    const id = idOf(launch.stdout)!;
    const sent = await runCli(['send', id, 'hello agent'], { dataDir });
    expect(sent.code, sent.stderr).toBe(0);
    await waitFor(async () => ((await runCli(['logs', id], { dataDir })).stdout.includes('agent> you said: hello agent') ? true : undefined), 'the agent to answer');
    expect((await runCli(['send', id], { dataDir })).code, 'TEXT or --eof is needed').toBe(2);

    const chatty = await runCli(['launch', '--repo', repo, '--agent', 'chatty'], { dataDir });
    const chattyId = idOf(chatty.stdout)!;
    await waitFor(async () => ((await runCli(['logs', chattyId], { dataDir })).stdout.includes('chatty line 2999') ? true : undefined), 'the output');
    for (const args of [['logs', chattyId], ['exec', chattyId, '--', 'sh', '-c', 'i=0; while [ $i -lt 20000 ]; do echo $i; i=$((i+1)); done']]) {
      const r = spawnSync('bash', ['-c', `set -o pipefail; "$0" "${CLI}" --data-dir "${dataDir}" "$@" | head -1`, process.execPath, ...args], { encoding: 'utf8', env: { ...process.env, BERTH_DATA_DIR: '' } });
      expect(r.stderr, args[0]).toBe('');
      expect(r.status, args[0]).toBe(0);
      expect(r.stdout.split('\n')).toHaveLength(2);
    }
  });

  it('gives usage errors for empty ids and an empty command', async () => {
    const exec = await runCli(['exec', 'x', '--', ''], { dataDir });
    expect(exec.code).toBe(2);
    expect(exec.stderr).toContain('exec: the command after -- must not be empty');
    const status = await runCli(['status', ''], { dataDir });
    expect(status.code).toBe(2);
    expect(status.stderr).toContain('status: ID must not be empty');
  });

  it('shows the exit code and last output of an agent that exits at once, and exits 1', async () => {
    const r = await runCli(['launch', '--repo', repo, '--agent', 'quick-fail'], { dataDir });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).not.toContain('is ready');
    expect(r.stderr).toMatch(/the agent of session s-\w+ exited with code 3 right after it started; its last output:/);
    expect(r.stderr).toContain('  | starting up\n');
    expect(r.stderr).toContain('  | error: no API key\n');
  });

  it('doctor: checks each agent command and says serve must restart after berth.yaml changed', async () => {
    const fresh = await runCli(['doctor'], { dataDir });
    expect(fresh.stdout).toMatch(/ok\s+serve config\s+berth serve runs with .*berth\.yaml as it is now/);
    expect(fresh.stdout).toMatch(/ok\s+agent quick-fail\s+\/\S*sh/);
    writeFileSync(join(dataDir, 'berth.yaml'), `${CONFIG}  ghost:\n    command: ["berth-no-such-command-xyz"]\n`);
    try {
      const changed = await runCli(['doctor'], { dataDir });
      expect(changed.code).toBe(1);
      expect(changed.stdout).toMatch(/fail\s+serve config\s+.*berth\.yaml changed since berth serve started \(it keeps using the old config\)/);
      expect(changed.stdout).toContain('fix: restart berth serve to apply it');
      expect(changed.stdout).toMatch(/fail\s+agent ghost\s+'berth-no-such-command-xyz' is not on PATH/);
    } finally {
      writeFileSync(join(dataDir, 'berth.yaml'), CONFIG);
    }
  });

  it('exits 5 with a hint, never "terminated" and 1, when serve dies during exec, shell or launch', async () => {
    const launch = await runCli(['launch', '--repo', repo, '--agent', 'demo', '--env', 'BERTH_DEMO_STEP_MS=0'], { dataDir });
    const id = idOf(launch.stdout)!;
    const kill = (): void => void serve?.kill('SIGKILL');
    const restart = async (): Promise<void> => {
      await new Promise((r) => (serve?.exitCode !== null || serve.signalCode !== null ? r(null) : serve.once('exit', r)));
      serve = (await startServeProcess(dataDir)).child;
    };

    const exec = await runUntil(dataDir, ['exec', id, '--', 'sh', '-c', 'echo started; exec sleep 30'], (o) => o.includes('started'), kill);
    expect(exec.code, exec.stderr).toBe(5);
    expect(exec.stderr).toMatch(/^berth: lost the controller \(.+\)\n {2}hint: the command's exit status is unknown/);
    await restart();

    const shell = await runUntil(dataDir, ['shell', id], (o) => o.includes('shell-42'), kill, 'echo shell-$((40+2))\n');
    expect(shell.code, shell.stderr).toBe(5);
    expect(shell.stderr).toContain('hint: the shell is ended with the controller');
    await restart();

    const followed = await runUntil(dataDir, ['launch', '--repo', repo, '--agent', 'demo'], (o) => o.includes('Launching session'), kill);
    expect(followed.code, followed.stderr).toBe(5);
    expect(followed.stderr).not.toContain('terminated\n');
    await restart();
  });
});
