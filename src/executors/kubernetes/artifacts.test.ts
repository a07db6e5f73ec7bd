import { mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentctlArtifacts, codeCacheNodeVersion, POD_AGENTCTL } from './artifacts.js';

const ARCH = process.arch === 'x64' ? 'x86_64' : process.arch === 'arm64' ? 'aarch64' : process.arch;
const DIGEST = 'a'.repeat(64);

describe('agentctl artifacts: the bundle with or without its V8 code cache', () => {
  let dir: string;
  let artifacts: AgentctlArtifacts;
  const bundle = (): string => join(dir, 'agentctl.cjs');
  const writeCache = (version: string): void => writeFileSync(`${bundle()}.v8cache`, Buffer.concat([Buffer.from(`berth-v8cache 1 ${DIGEST} ${version}\n`), Buffer.from([1, 2, 3])]));

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'berth-artifacts-'));
    writeFileSync(bundle(), '#!/usr/bin/env node\nconsole.log(1)\n');
    writeFileSync(join(dir, 'agentctl-loader.cjs'), '// loader\n');
    writeCache('v20.20.2');
    artifacts = new AgentctlArtifacts({ bundle: bundle(), sea: join(dir, 'agentctl-sea') });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('delivers the loader and the cache, and starts through the loader, when the image runs the Node the cache was made with on this CPU', () => {
    const d = artifacts.delivery('bundle', 'linux/amd64', { nodeVersion: 'v20.20.2', arch: ARCH });
    expect(d.codeCache).toBe(true);
    expect(d.files.map((f) => f.path)).toEqual([POD_AGENTCTL.loader, POD_AGENTCTL.codeCache, POD_AGENTCTL.prestart, POD_AGENTCTL.launcher]);
    expect(d.files.at(-1)?.data.toString()).toBe(`#!/bin/sh\nexec node ${POD_AGENTCTL.loader} ${POD_AGENTCTL.bundle} "$@"\n`);
    // the Node pre-start runs the same: the loader, with the bundle as its argument
    expect(JSON.parse(d.files[2]?.data.toString() ?? '')).toEqual({ main: POD_AGENTCTL.loader, args: [POD_AGENTCTL.bundle] });
    expect(d.tail.path).toBe(POD_AGENTCTL.bundle);
    expect(d.bytes).toBe(d.files.reduce((n, f) => n + f.data.length, d.tail.data.length));
  });

  it.each([
    ['another Node version', { nodeVersion: 'v20.19.0', arch: ARCH }],
    ['no Node version reported', { nodeVersion: null, arch: ARCH }],
    ['another CPU', { nodeVersion: 'v20.20.2', arch: ARCH === 'aarch64' ? 'x86_64' : 'aarch64' }],
    ['no CPU reported', { nodeVersion: 'v20.20.2', arch: null }],
  ])('delivers the plain bundle for %s', (_what, runtime) => {
    const d = artifacts.delivery('bundle', 'linux/amd64', runtime);
    expect(d.codeCache).toBe(false);
    expect(d.files.map((f) => f.path)).toEqual([POD_AGENTCTL.prestart, POD_AGENTCTL.launcher]);
    expect(JSON.parse(d.files[0]?.data.toString() ?? '')).toEqual({ main: POD_AGENTCTL.bundle, args: [] });
    expect(d.files[1]?.data.toString()).toBe(`#!/bin/sh\nexec node ${POD_AGENTCTL.bundle} "$@"\n`);
  });

  it('delivers the plain bundle when the build has no loader or no cache', () => {
    rmSync(join(dir, 'agentctl-loader.cjs'));
    expect(artifacts.delivery('bundle', 'linux/amd64', { nodeVersion: 'v20.20.2', arch: ARCH }).codeCache).toBe(false);
    writeFileSync(join(dir, 'agentctl-loader.cjs'), '// loader\n');
    rmSync(`${bundle()}.v8cache`);
    expect(artifacts.delivery('bundle', 'linux/amd64', { nodeVersion: 'v20.20.2', arch: ARCH }).codeCache).toBe(false);
  });

  it('reads the cache again when the build rewrote it', () => {
    const runtime = { nodeVersion: 'v20.20.2', arch: ARCH };
    const first = artifacts.delivery('bundle', 'linux/amd64', runtime);
    expect(artifacts.delivery('bundle', 'linux/amd64', runtime)).toBe(first);
    writeFileSync(`${bundle()}.v8cache`, Buffer.concat([Buffer.from(`berth-v8cache 1 ${DIGEST} v20.20.2\n`), Buffer.from([9, 9, 9, 9])]));
    const later = new Date(Date.now() + 5000);
    // mtime granularity: make the rewrite visible however fast the test runs
    utimesSync(`${bundle()}.v8cache`, later, later);
    const second = artifacts.delivery('bundle', 'linux/amd64', runtime);
    expect(second).not.toBe(first);
    expect(second.files[1]?.data.subarray(-4)).toEqual(Buffer.from([9, 9, 9, 9]));
  });

  it('reads the Node version from a cache header, and nothing from anything else', () => {
    expect(codeCacheNodeVersion(`${bundle()}.v8cache`)).toBe('v20.20.2');
    writeFileSync(join(dir, 'bad'), 'berth-v8cache 2 x v20.20.2\n');
    expect(codeCacheNodeVersion(join(dir, 'bad'))).toBeNull();
    expect(codeCacheNodeVersion(join(dir, 'missing'))).toBeNull();
  });
});
