import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ComposeFieldError } from './errors.js';
import { gitCredentialFile, gitCredentialHelperScript } from './git-credentials.js';
import type { BootstrapPaths } from './paths.js';
import { prepareScript, type PrepareInput } from './prepare.js';
import { runSh, SHELLS, tempRoots } from '../testing/compose-fixtures.js';

const GIT_ENV = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1', HOME: '/nonexistent' };
const git = (cwd: string, ...args: string[]): string => execFileSync('git', args, { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' }).trim();

let fixtures: string;
let bare: string;
beforeAll(() => {
  fixtures = mkdtempSync(join(tmpdir(), 'berth-prepare-fixtures-'));
  const src = join(fixtures, 'src');
  mkdirSync(src);
  git(src, 'init', '-q', '-b', 'main');
  writeFileSync(join(src, 'README.md'), 'hello\n');
  writeFileSync(join(src, '.hidden'), 'dotfile\n');
  git(src, 'add', '.');
  git(src, 'commit', '-q', '-m', 'one');
  git(src, 'checkout', '-q', '-b', 'feature');
  writeFileSync(join(src, 'feature.txt'), 'feature\n');
  git(src, 'add', '.');
  git(src, 'commit', '-q', '-m', 'two');
  git(src, 'checkout', '-q', 'main');
  bare = join(fixtures, 'app.git');
  git(fixtures, 'clone', '-q', '--bare', src, bare);
});
afterAll(() => rmSync(fixtures, { recursive: true, force: true }));

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function roots(): { dir: string; paths: BootstrapPaths } {
  const t = tempRoots('berth-prepare-');
  dirs.push(t.dir);
  mkdirSync(t.paths.home);
  return t;
}

describe.each(SHELLS)('prepareScript with %s', (_label, shell) => {
  const run = (p: BootstrapPaths, input: Omit<PrepareInput, 'paths'>, extraEnv: Record<string, string> = {}) =>
    runSh(shell, prepareScript({ ...input, paths: p }), { env: { PATH: process.env.PATH, HOME: p.home, GIT_CONFIG_NOSYSTEM: '1', ...extraEnv }, cwd: p.runtimeDir });

  it('announces each step on fd 3 and ends a setup script that outlives its limit, naming it', () => {
    const { paths: p } = roots();
    const script = prepareScript({ source: { kind: 'url', url: `file://${bare}` }, setupScript: 'sleep 30', limits: { cloneSeconds: 60, setupScriptSeconds: 1 }, paths: p });
    const r = runSh(shell, `exec 3>&1\n${script}`, { env: { PATH: process.env.PATH, HOME: p.home, GIT_CONFIG_NOSYSTEM: '1' }, cwd: p.runtimeDir });
    expect(r.stdout).toContain('berth: step clone\n');
    expect(r.stdout).toContain('berth: step setup_script\n');
    expect(r.status, 'a setup script past its limit fails prepare.sh').not.toBe(0);
    expect(r.stderr).toContain('berth prepare: setup_script did not finish within 1 s');
    // the clone itself is complete: a retry of the setup script keeps it
    expect(existsSync(join(p.workspace, '.git'))).toBe(true);
  });

  it('clones a URL (with its branch) into the workspace once, runs the setup script, and keeps the checkout after', () => {
    const { paths: p } = roots();
    const input = { source: { kind: 'url' as const, url: `file://${bare}`, branch: 'feature' }, setupScript: 'echo setup >>"$PWD/../setup-runs"' };
    const first = run(p, input);
    expect(first.stderr).toBe('');
    expect(first.status).toBe(0);
    expect(readFileSync(join(p.workspace, 'feature.txt'), 'utf8')).toBe('feature\n');
    expect(readFileSync(join(p.workspace, '.hidden'), 'utf8')).toBe('dotfile\n');
    expect(git(p.workspace, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('feature');
    expect(git(p.workspace, 'remote', 'get-url', 'origin')).toBe(`file://${bare}`);
    expect(readFileSync(join(p.workspace, '..', 'setup-runs'), 'utf8')).toBe('setup\n');
    // agentctl's state directory and Berth's markers never show up as changes.
    expect(git(p.workspace, 'status', '--porcelain')).toBe('');

    writeFileSync(join(p.workspace, 'agent-work.txt'), 'keep me\n');
    writeFileSync(p.gitCredentials, 'username=u\npassword=p\n');
    const second = run(p, input);
    expect(existsSync(p.gitCredentials)).toBe(false);
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('keeping the existing checkout');
    expect(readFileSync(join(p.workspace, 'agent-work.txt'), 'utf8')).toBe('keep me\n');
    expect(readFileSync(join(p.workspace, '..', 'setup-runs'), 'utf8')).toBe('setup\n');
  });

  it('clones into a workspace holding only lost+found and agentctl state', () => {
    const { paths: p } = roots();
    mkdirSync(join(p.workspace, 'lost+found'));
    mkdirSync(join(p.workspace, '.agentctl', 'state'), { recursive: true });
    const r = run(p, { source: { kind: 'url', url: `file://${bare}` }, setupScript: '' });
    expect(r.status).toBe(0);
    expect(git(p.workspace, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('main');
  });

  it('refuses a non-empty workspace that is not a checkout and leaves its files alone', () => {
    const { paths: p } = roots();
    writeFileSync(join(p.workspace, 'notes.txt'), 'mine\n');
    const r = run(p, { source: { kind: 'url', url: `file://${bare}` }, setupScript: '' });
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('is not empty but is not a git checkout');
    expect(readFileSync(join(p.workspace, 'notes.txt'), 'utf8')).toBe('mine\n');
    expect(existsSync(join(p.workspace, '.git'))).toBe(false);
  });

  it('discards an interrupted clone and clones again', () => {
    const { paths: p } = roots();
    mkdirSync(join(p.workspace, '.agentctl'));
    writeFileSync(join(p.workspace, '.agentctl', 'berth-clone-incomplete'), '');
    writeFileSync(join(p.workspace, 'half-copied.txt'), '');
    const r = run(p, { source: { kind: 'url', url: `file://${bare}` }, setupScript: '' });
    expect(r.status).toBe(0);
    expect(existsSync(join(p.workspace, 'half-copied.txt'))).toBe(false);
    expect(existsSync(join(p.workspace, 'README.md'))).toBe(true);
  });

  it('retries a failed setup script on the next run without cloning again', () => {
    const { dir, paths: p } = roots();
    const flag = join(dir, 'fail-setup');
    writeFileSync(flag, '');
    const input = { source: { kind: 'url' as const, url: `file://${bare}` }, setupScript: `if [ -e '${flag}' ]; then echo broken >&2; exit 5; fi\necho ok >setup-done` };
    const first = run(p, input);
    expect(first.status).not.toBe(0);
    expect(first.stderr).toContain('broken');
    rmSync(flag);
    const second = run(p, input);
    expect(second.status).toBe(0);
    expect(second.stdout).toContain('keeping the existing checkout');
    expect(readFileSync(join(p.workspace, 'setup-done'), 'utf8')).toBe('ok\n');
  });

  it('clones a streamed git bundle with its branches and history, and points origin at the source', () => {
    const { paths: p } = roots();
    execFileSync('git', ['bundle', 'create', p.repoBundle, '--all'], { cwd: join(fixtures, 'src'), env: { ...process.env, ...GIT_ENV }, stdio: 'ignore' });
    const r = run(p, { source: { kind: 'bundle', branch: 'feature', originUrl: '/home/user/app' }, setupScript: '' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(git(p.workspace, 'rev-parse', '--abbrev-ref', 'HEAD')).toBe('feature');
    expect(git(p.workspace, 'rev-list', '--count', 'HEAD')).toBe('2');
    expect(git(p.workspace, 'rev-parse', '--verify', '-q', 'origin/main')).toMatch(/^[0-9a-f]{40}$/);
    expect(git(p.workspace, 'remote', 'get-url', 'origin')).toBe('/home/user/app');
    expect(existsSync(p.repoBundle)).toBe(false);
  });

  it('makes a repo-less workspace and runs the setup script only the first time', () => {
    const { paths: p } = roots();
    rmSync(p.workspace, { recursive: true });
    const input = { source: { kind: 'none' as const }, setupScript: 'echo x >>runs' };
    expect(run(p, input).status).toBe(0);
    expect(run(p, input).status).toBe(0);
    expect(readFileSync(join(p.workspace, 'runs'), 'utf8')).toBe('x\n');
  });

  it('hands an https credential to git only through the helper, and leaves it nowhere', () => {
    const { dir, paths: p } = roots();
    const creds = { username: 'berth-user', password: 'pa55-w0rd-secret' };
    writeFileSync(p.gitCredentials, gitCredentialFile(creds), { mode: 0o600 });
    writeFileSync(p.gitCredentialHelper, gitCredentialHelperScript(p), { mode: 0o700 });
    // A stand-in git: records argv, asks the configured helpers for the server's credential the way
    // git would before an https request, then runs the real git. No server is contacted: a system
    // config maps the https URL to the local bare repository.
    const bin = join(dir, 'bin');
    mkdirSync(bin);
    const realGit = execFileSync('sh', ['-c', 'command -v git'], { encoding: 'utf8' }).trim();
    writeFileSync(
      join(bin, 'git'),
      `#!/usr/bin/env node
const { spawnSync } = require('node:child_process');
const fs = require('node:fs');
const args = process.argv.slice(2);
fs.appendFileSync(${JSON.stringify(join(dir, 'argv.log'))}, JSON.stringify(args) + '\\n');
const i = args.indexOf('clone');
if (i >= 0) {
  const fill = spawnSync(${JSON.stringify(realGit)}, [...args.slice(0, i), 'credential', 'fill'], { input: 'protocol=https\\nhost=git.example.test\\n\\n' });
  fs.writeFileSync(${JSON.stringify(join(dir, 'fill.out'))}, fill.stdout);
}
process.exit(spawnSync(${JSON.stringify(realGit)}, args, { stdio: 'inherit' }).status ?? 1);
`,
    );
    chmodSync(join(bin, 'git'), 0o755);
    const system = join(dir, 'gitconfig-system');
    writeFileSync(system, `[url "file://${bare}"]\n\tinsteadOf = https://git.example.test/app.git\n`);
    const url = 'https://git.example.test/app.git';
    const script = prepareScript({ source: { kind: 'url', url, credentials: true }, setupScript: '', paths: p });
    expect(script).not.toContain(creds.password);
    const r = runSh(shell, script, { env: { PATH: `${bin}:${process.env.PATH}`, HOME: p.home, GIT_CONFIG_SYSTEM: system } });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(readFileSync(join(dir, 'fill.out'), 'utf8')).toContain(`username=${creds.username}\npassword=${creds.password}\n`);
    expect(readFileSync(join(dir, 'argv.log'), 'utf8')).not.toContain(creds.password);
    expect(readFileSync(join(p.workspace, '.git', 'config'), 'utf8')).not.toContain(creds.password);
    expect(git(p.workspace, 'remote', 'get-url', 'origin')).toBe(url);
    // Removed once cloned: the agent, started after prepare, never sees it.
    expect(existsSync(p.gitCredentials)).toBe(false);
  });
});

describe('prepareScript', () => {
  it.each([
    [{ kind: 'url' as const, url: 'https://user:tok@example.com/r.git' }, 'repository.url'],
    [{ kind: 'url' as const, url: 'https://user@example.com/r.git', credentials: true }, 'repository.url'],
    [{ kind: 'url' as const, url: '--upload-pack=x' }, 'repository.url'],
    [{ kind: 'url' as const, url: 'file:///r', branch: '--force' }, 'repository.branch'],
  ])('rejects %j at %s', (source, path) => {
    let caught: unknown;
    try {
      prepareScript({ source, setupScript: '' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ComposeFieldError);
    expect((caught as ComposeFieldError).path).toBe(path);
  });

  it('quotes every data value', () => {
    const s = prepareScript({ source: { kind: 'url', url: "file:///tmp/it's $(id)", branch: 'b`x`' }, setupScript: 'echo "$(date)"' });
    expect(s).toContain(`'file:///tmp/it'\\''s $(id)'`);
    expect(s).toContain("--branch 'b`x`'");
    expect(s).toContain(`sh -e -c 'echo "$(date)"'`);
  });
});

describe('gitCredentialFile', () => {
  it('refuses line breaks that would inject credential attributes', () => {
    expect(() => gitCredentialFile({ username: 'u', password: 'p\nhost=evil.example' })).toThrow(ComposeFieldError);
  });
});
