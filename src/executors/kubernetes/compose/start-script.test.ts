import { chmodSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { authEnv, runtimeEnv, serializeEnvFile, type AgentctlFlavor } from './env-file.js';
import type { BootstrapPaths } from './paths.js';
import { EXIT_PREPARE_FAILED, startScript } from './start-script.js';
import { IDENTITY, runSh, SHELLS, tempRoots } from '../testing/compose-fixtures.js';

const NONCE = 'cd'.repeat(32);
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function bootstrapped(flavor: AgentctlFlavor, prepare: string): BootstrapPaths {
  const t = tempRoots('berth-start-');
  dirs.push(t.dir);
  const p = t.paths;
  writeFileSync(p.runtimeEnv, serializeEnvFile(runtimeEnv(IDENTITY, flavor, p)));
  writeFileSync(p.authEnv, serializeEnvFile(authEnv(p)));
  writeFileSync(p.nonceFile, `${NONCE}\n`);
  writeFileSync(p.prepareScript, prepare);
  // Stand-ins for agentctl: print what the real one would read, and how it was started.
  writeFileSync(p.agentctl, '#!/bin/sh\necho "sea nonce=$(cat "$AGENTCTL_BOOTSTRAP_NONCE_FILE") env=${AGENTCTL_BOOTSTRAP_NONCE:-none} home=$HOME session=$BERTH_SESSION_ID"\n');
  chmodSync(p.agentctl, 0o755);
  writeFileSync(p.agentctlBundle, 'console.log(`bundle nonce=${require("fs").readFileSync(process.env.AGENTCTL_BOOTSTRAP_NONCE_FILE, "utf8").trim()} port=${process.env.AGENTCTL_PORT}`)\n');
  return p;
}

describe.each(SHELLS)('startScript with %s', (_label, shell) => {
  it('waits for the start marker, then prepares once and execs the SEA agentctl', async () => {
    const p = bootstrapped('sea', 'echo prepared >>"$BERTH_WORKSPACE/count"\necho "prepare saw HOME=$HOME"\n');
    const [cmd = 'sh', ...pre] = shell;
    const child = spawn(cmd, [...pre, '-c', startScript(p)], { env: { PATH: process.env.PATH } });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    // The container idles until the marker exists: nothing is prepared or started before it.
    await new Promise((r) => setTimeout(r, 300));
    expect(child.exitCode).toBeNull();
    expect(existsSync(`${p.workspace}/count`)).toBe(false);
    writeFileSync(p.startMarker, '');
    expect(await exited).toBe(0);
    expect(out, 'the nonce is in its file, in no environment').toBe(`sea nonce=${NONCE} env=none home=${p.home} session=ses-1\n`);
    expect(readFileSync(p.prepareLog, 'utf8')).toBe(`prepare saw HOME=${p.home}\n`);
    expect(existsSync(p.preparedMarker)).toBe(true);

    // A container restart: straight to agentctl, prepare.sh not run again.
    const again = runSh(shell, startScript(p));
    expect(again.status).toBe(0);
    expect(readFileSync(`${p.workspace}/count`, 'utf8')).toBe('prepared\n');
  });

  it('runs the bundle with node when the flavor is bundle', () => {
    const p = bootstrapped('bundle', ':\n');
    writeFileSync(p.startMarker, '');
    const r = runSh(shell, startScript(p));
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(`bundle nonce=${NONCE} port=8765\n`);
  });

  it('exits with EXIT_PREPARE_FAILED when prepare.sh fails, records its status and output, and does not start agentctl', () => {
    const p = bootstrapped('sea', 'echo "cloning failed: no route"\nexit 3\n');
    writeFileSync(p.startMarker, '');
    const r = runSh(shell, startScript(p));
    expect(r.status).toBe(EXIT_PREPARE_FAILED);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('cloning failed: no route');
    expect(readFileSync(p.prepareFailed, 'utf8').trim()).toBe('3');
    expect(readFileSync(p.prepareLog, 'utf8')).toContain('cloning failed');
    expect(existsSync(p.preparedMarker)).toBe(false);

    // The retry (after the kubelet's back-off) succeeds and clears the failure record.
    writeFileSync(p.prepareScript, ':\n');
    expect(runSh(shell, startScript(p)).status).toBe(0);
    expect(existsSync(p.prepareFailed)).toBe(false);
  });
});

describe('startScript', () => {
  it('contains paths only (it is visible in the Pod spec)', () => {
    const s = startScript();
    expect(s).toContain("'/opt/berth/start'");
    expect(s).toContain("exec '/opt/berth/agentctl'");
    expect(s).toContain("exec node '/opt/berth/agentctl.cjs'");
    expect(s).not.toMatch(/NONCE=|[0-9a-f]{32}/);
  });
});
