/**
 * An agent's per-session state directory through the real CLI and `berth serve` (local, sandboxed):
 * `{{agent_state}}` is a private directory that survives stop/resume, seeded with the agent's
 * `state_files` and its login file from serve's home (only when no credential variable goes in),
 * the login never in the inventory; each session gets its own.
 */
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, makeRepo, removeSessionsAndStop, runCli, startServeProcess, tempDir } from './helpers.js';

const LOGIN = '{"refresh_token":"berth-login-7f3a9c"}';
/** A raw agent that shows its state directory, then records a run there. */
const SCRIPT = 'cd "$STATE" && stat -c "%a" . && cat creds.json config.toml && ls runs 2>/dev/null | wc -l && mkdir -p runs && touch "runs/$$" && sleep 300';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    const st = statSync(p, { throwIfNoEntry: false });
    return st?.isDirectory() ? filesUnder(p) : st?.isFile() ? [p] : [];
  });
}

describe('agent state directories (local)', () => {
  let root: string;
  let dataDir: string;
  let repo: string;
  let serve: ChildProcess | undefined;
  const cli = (...args: string[]) => runCli(args, { dataDir });
  const logs = async (id: string, want: RegExp): Promise<string> => {
    for (let i = 0; i < 100; i++) {
      const out = (await cli('logs', id)).stdout;
      if (want.test(out)) return out;
      await new Promise((r) => setTimeout(r, 200));
    }
    throw new Error(`timed out waiting for ${String(want)} in the logs of ${id}`);
  };

  beforeAll(async () => {
    ensureBuilt();
    root = tempDir('berth-agent-state-');
    dataDir = join(root, 'data');
    repo = join(root, 'repo');
    const home = join(root, 'home');
    makeRepo(repo);
    mkdirSync(join(home, '.prober'), { recursive: true });
    writeFileSync(join(home, '.prober', 'login.json'), LOGIN);
    mkdirSync(dataDir, { recursive: true });
    writeFileSync(
      join(dataDir, 'berth.yaml'),
      [
        'agents:',
        '  prober:',
        `    command: ["sh", "-c", ${JSON.stringify(SCRIPT)}]`,
        '    env: { STATE: "{{agent_state}}" }',
        '    credential_env: [PROBER_KEY]',
        '    login_files: [{ host: "~/.prober/login.json", state: creds.json }]',
        '    state_files: [{ path: config.toml, content: "seeded = true\\n" }]',
        '',
      ].join('\n'),
    );
    serve = (await startServeProcess(dataDir, [], { HOME: home })).child;
  });

  afterAll(async () => {
    await removeSessionsAndStop(dataDir, serve);
    rmSync(root, { recursive: true, force: true });
  });

  it('seeds the state directory once, keeps it across stop/resume, and never records the login', async () => {
    const launch = await cli('launch', '--repo', repo, '--agent', 'prober');
    expect(launch.code, launch.stderr).toBe(0);
    const id = /Session (\S+) is ready/.exec(launch.stdout)?.[1] ?? '';
    const first = await logs(id, /seeded = true\n0\n/);
    expect(first).toContain(`700\n${LOGIN}seeded = true\n0\n`);

    expect((await cli('stop', id)).code).toBe(0);
    expect((await cli('resume', id)).code).toBe(0);
    // the second run finds the first run's mark: the same directory
    await logs(id, /seeded = true\n1\n/);

    const other = await cli('launch', '--repo', repo, '--agent', 'prober');
    const otherId = /Session (\S+) is ready/.exec(other.stdout)?.[1] ?? '';
    expect((await logs(otherId, /seeded = true\n\d\n/)).endsWith('seeded = true\n0\n'), 'a session of its own').toBe(true);

    // the login went to the agent's state only: not the inventory, not anything else of serve's
    const outside = filesUnder(dataDir).filter((p) => !/\/agents\/prober\//.test(p) && !/\/processes\/[^/]+\/output\.jsonl$/.test(p));
    expect(outside.filter((p) => readFileSync(p).includes('berth-login-7f3a9c'))).toEqual([]);
    expect((await cli('status', id, '-o', 'json')).stdout).not.toContain('berth-login-7f3a9c');
  });
});
