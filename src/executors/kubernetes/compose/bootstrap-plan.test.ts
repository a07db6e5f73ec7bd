import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { AGENTCTL_STARTING_LINE, bootstrapPlans, EXIT_UPLOAD_PREPARE_FAILED, lineWatcher } from './bootstrap-plan.js';
import { prepareScript } from './prepare.js';
import { startScript } from './start-script.js';
import { IDENTITY, runSh, SHELLS, tempRoots } from '../testing/compose-fixtures.js';
import { bootstrapUpload } from './upload.js';

const NONCE = '0f'.repeat(32);
const GIT_ENV = { GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.test', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.test', GIT_CONFIG_NOSYSTEM: '1' };
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe.each(SHELLS)('the whole bootstrap with %s', (_label, shell) => {
  it('uploads a local repository bundle and the runtime in two execs, then the start command prepares and execs agentctl', () => {
    const { dir, paths: p } = tempRoots('berth-bootstrap-');
    dirs.push(dir);
    const src = join(dir, 'src');
    mkdirSync(src);
    const git = (...args: string[]) => execFileSync('git', args, { cwd: src, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' });
    git('init', '-q', '-b', 'work');
    writeFileSync(join(src, 'app.txt'), 'app\n');
    git('add', '.');
    git('commit', '-q', '-m', 'init');
    const bundle = execFileSync('git', ['bundle', 'create', '-', '--all'], { cwd: src, env: { ...process.env, ...GIT_ENV }, stdio: ['ignore', 'pipe', 'ignore'] });

    const agentctl = Buffer.from('#!/bin/sh\necho "agentctl nonce=$(cat "$AGENTCTL_BOOTSTRAP_NONCE_FILE") env=${AGENTCTL_BOOTSTRAP_NONCE:-none} state=$AGENTCTL_STATE_DIR"\n');
    const plans = bootstrapPlans({
      identity: IDENTITY,
      flavor: 'sea',
      bootstrapNonce: NONCE,
      prepareScript: prepareScript({ source: { kind: 'bundle', originUrl: src }, setupScript: 'echo ready >.setup-ran', paths: p }),
      repositoryCredentials: { username: 'u', password: 'not-needed-for-a-bundle' },
      repoBundle: bundle,
      agentctl,
      paths: p,
    });
    expect(plans).toHaveLength(2);
    for (const plan of plans) {
      const { script, stdin } = bootstrapUpload(plan);
      const r = runSh(shell, script, { input: Buffer.concat(stdin) });
      expect(r.stderr).toBe('');
      expect(r.status).toBe(0);
    }
    expect(statSync(p.authEnv).mode & 0o777).toBe(0o600);
    expect(statSync(p.home).mode & 0o777).toBe(0o700);
    expect(statSync(p.agentctl).mode & 0o777).toBe(0o755);
    expect(existsSync(p.startMarker)).toBe(true);

    const r = runSh(shell, startScript(p), { env: { PATH: process.env.PATH, GIT_CONFIG_NOSYSTEM: '1' } });
    expect(r.stderr).toBe('');
    expect(r.stdout, 'the nonce reaches agentctl in its file, in no environment').toBe(`agentctl nonce=${NONCE} env=none state=${p.agentctlStateDir}\n`);
    expect(readFileSync(p.authEnv, 'utf8')).not.toContain(NONCE);
    expect(statSync(p.nonceFile).mode & 0o777).toBe(0o600);
    expect(readFileSync(join(p.workspace, 'app.txt'), 'utf8')).toBe('app\n');
    expect(readFileSync(join(p.workspace, '.setup-ran'), 'utf8')).toBe('ready\n');
    expect(existsSync(p.repoBundle)).toBe(false);
    expect(existsSync(p.gitCredentials)).toBe(false);
  });

  it('runs prepare.sh inside the bootstrap exec when asked, and starts agentctl through a delivered launcher', () => {
    const { dir, paths: p } = tempRoots('berth-bootstrap-');
    dirs.push(dir);
    const build = { path: join(p.runtimeDir, 'agentctl-sea'), mode: 0o755, data: Buffer.from('#!/bin/sh\necho "agentctl via launcher: $*"\n') };
    const launcher = { path: p.agentctlLauncher, mode: 0o755, data: Buffer.from(`#!/bin/sh\nexec ${build.path} --from-launcher\n`) };
    const [plan, ...more] = bootstrapPlans({
      identity: IDENTITY,
      flavor: 'sea',
      bootstrapNonce: NONCE,
      prepareScript: prepareScript({ source: { kind: 'none' }, setupScript: 'echo "setup HOME=$HOME"', paths: p }),
      agentctl: build,
      extraFiles: [launcher],
      waitForPrepare: true,
      paths: p,
    });
    expect(more).toEqual([]);
    const up = bootstrapUpload(plan!);
    const r = runSh(shell, up.script, { input: Buffer.concat(up.stdin) });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    // the controller starts connecting when it reads the marker line, and follows prepare.sh's steps
    expect(r.stdout).toBe(`${AGENTCTL_STARTING_LINE}\nberth: step setup_script\n`);
    // prepare.sh ran during the exec, after the marker: the workspace is ready when it returns.
    expect(existsSync(p.preparedMarker)).toBe(true);
    expect(readFileSync(p.prepareLog, 'utf8')).toContain(`setup HOME=${p.home}`);
    const start = runSh(shell, startScript(p));
    expect(start.stdout).toBe('agentctl via launcher: --from-launcher\n');
  });

  it('reports a prepare.sh failure from the bootstrap exec with its output; the start command, already started, leaves prepare to the exec', () => {
    const { dir, paths: p } = tempRoots('berth-bootstrap-');
    dirs.push(dir);
    writeFileSync(join(p.workspace, 'stray.txt'), 'not a checkout\n');
    const [plan] = bootstrapPlans({
      identity: IDENTITY,
      flavor: 'sea',
      bootstrapNonce: NONCE,
      prepareScript: prepareScript({ source: { kind: 'url', url: 'file:///nonexistent/repo.git' }, setupScript: '', paths: p }),
      agentctl: Buffer.from('#!/bin/sh\necho "agentctl started"\n'),
      waitForPrepare: true,
      paths: p,
    });
    const up = bootstrapUpload(plan!);
    const r = runSh(shell, up.script, { input: Buffer.concat(up.stdin) });
    expect(r.status).toBe(EXIT_UPLOAD_PREPARE_FAILED);
    expect(r.stderr).toContain('is not empty but is not a git checkout');
    expect(r.stdout, 'the marker line comes before prepare.sh runs').toBe(`${AGENTCTL_STARTING_LINE}\n`);
    expect(readFileSync(p.prepareFailed, 'utf8').trim()).toBe('1');
    // The marker came before prepare.sh (agentctl boots during the clone), after the prepare.exec marker.
    expect(existsSync(p.startMarker)).toBe(true);
    expect(existsSync(p.prepareInExecMarker)).toBe(true);
    const log = readFileSync(p.prepareLog, 'utf8');
    const start = runSh(shell, startScript(p));
    expect(start.stdout, 'the start command runs agentctl, not a second prepare.sh').toBe('agentctl started\n');
    expect(readFileSync(p.prepareLog, 'utf8')).toBe(log);
  });
});

describe('lineWatcher', () => {
  it('calls back once, when the whole line has arrived, even split across chunks', () => {
    let seen = 0;
    const watch = lineWatcher('berth: go', () => seen++);
    watch(Buffer.from('x'));
    watch(Buffer.from('berth: g'));
    expect(seen).toBe(0);
    watch(Buffer.from('o'));
    expect(seen, 'not before its newline').toBe(0);
    watch(Buffer.from('\nberth: go\n'));
    expect(seen).toBe(1);
  });

  it('does not call back for a line that only contains the text or lacks it', () => {
    let seen = 0;
    const watch = lineWatcher('go', () => seen++);
    for (const part of ['g', 'o', 'ne', '\n', 'g\n', 'o!\n']) watch(Buffer.from(part));
    expect(seen).toBe(0);
  });
});
