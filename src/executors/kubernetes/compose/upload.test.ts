import { mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ComposeFieldError } from './errors.js';
import { runSh, SHELLS, tempRoots } from '../testing/compose-fixtures.js';
import { gzipSync } from 'node:zlib';
import { bootstrapUpload, compressedUploadScript, EXIT_SHORT_WRITE, EXIT_UNSAFE_DESTINATION, ONE_BLOCK_MAX, type UploadPlan } from './upload.js';

const ALL_BYTES = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function setup() {
  const t = tempRoots('berth-upload-');
  dirs.push(t.dir);
  return t;
}

describe.each(SHELLS)('bootstrapUpload with %s', (_label, shell) => {
  it('writes every file byte-identical, with its mode, and the marker last', () => {
    const { paths } = setup();
    const big = Buffer.concat([ALL_BYTES, Buffer.alloc(200_000, 0xab), ALL_BYTES.subarray(0, 7)]);
    const plan: UploadPlan = {
      roots: [paths.runtimeDir, paths.authDir],
      directories: [{ path: paths.home, mode: 0o700 }],
      files: [
        { path: paths.runtimeEnv, mode: 0o600, data: Buffer.from("A='1'\nB='no newline at the end'") },
        { path: join(paths.authDir, 'bin', 'all-bytes'), mode: 0o600, data: ALL_BYTES },
        { path: join(paths.runtimeDir, 'empty'), mode: 0o644, data: Buffer.alloc(0) },
        { path: paths.prepareScript, mode: 0o700, data: Buffer.concat([ALL_BYTES.subarray(200), ALL_BYTES]) },
      ],
      tail: { path: paths.agentctl, mode: 0o755, data: big },
      marker: paths.startMarker,
    };
    const { script, stdin } = bootstrapUpload(plan);
    const r = runSh(shell, script, { input: Buffer.concat(stdin) });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    for (const f of [...plan.files, plan.tail!]) {
      expect(readFileSync(f.path).equals(Buffer.from(f.data)), f.path).toBe(true);
      expect(statSync(f.path).mode & 0o7777, f.path).toBe(f.mode);
    }
    expect(statSync(paths.home).mode & 0o777).toBe(0o700);
    expect(readFileSync(paths.startMarker).length).toBe(0);
    expect(readdirSync(paths.runtimeDir).filter((n) => n.startsWith('.berth-upload'))).toEqual([]);
    expect(script).not.toContain('no newline at the end');
  });

  it('writes the same files when the upload is compressed (one gzip member per chunk, read through gzip -dc)', () => {
    const { paths } = setup();
    const big = Buffer.concat([ALL_BYTES, Buffer.alloc(300_000, 0x5a), ALL_BYTES]);
    const plan: UploadPlan = {
      roots: [paths.runtimeDir, paths.authDir],
      files: [
        { path: paths.runtimeEnv, mode: 0o600, data: Buffer.from("A='1'\n") },
        { path: join(paths.runtimeDir, 'lib', 'libx.so'), mode: 0o755, data: Buffer.concat([ALL_BYTES, ALL_BYTES]) },
      ],
      tail: { path: paths.agentctl, mode: 0o755, data: big },
      marker: paths.startMarker,
    };
    const plain = bootstrapUpload(plan);
    const cmd = { script: compressedUploadScript(plain.script), stdin: plain.stdin.map((b) => gzipSync(b, { level: 1 })) };
    const input = Buffer.concat(cmd.stdin);
    expect(input.length, 'smaller on the wire').toBeLessThan(big.length / 10);
    const r = runSh(shell, cmd.script, { input });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    for (const f of [...plan.files, plan.tail!]) expect(readFileSync(f.path).equals(Buffer.from(f.data)), f.path).toBe(true);
    expect(existsSync(paths.startMarker)).toBe(true);
  });

  it.each([
    ['dd iflag=fullblock', false],
    ['only dd bs=1 (no fullblock)', true],
  ])('frames large sized files exactly with %s', (_how, noFullblock) => {
    const { dir, paths } = setup();
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH };
    if (noFullblock) {
      // A dd that, like some minimal builds, does not know iflag=fullblock.
      const bin = join(dir, 'bin');
      mkdirSync(bin);
      const realDd = runSh(shell, 'command -v dd').stdout.trim();
      writeFileSync(join(bin, 'dd'), `#!/bin/sh\ncase "$*" in *fullblock*) echo "dd: unknown flag" >&2; exit 1;; esac\nexec ${realDd} "$@"\n`, { mode: 0o755 });
      env.PATH = `${bin}:${process.env.PATH}`;
    }
    const lib = Buffer.concat(Array.from({ length: 300 }, (_, i) => ALL_BYTES.subarray(i % 7)));
    const files = [
      { path: join(paths.runtimeDir, 'lib', 'libc.so.6'), mode: 0o755, data: lib },
      { path: join(paths.runtimeDir, 'lib', 'exact-blocks'), mode: 0o644, data: Buffer.alloc(8192, 7) },
      { path: join(paths.runtimeDir, 'small'), mode: 0o600, data: Buffer.from('x') },
      // past the one-block limit: whole 4 KiB blocks and a remainder (too slow through dd bs=1 alone)
      ...(noFullblock ? [] : [{ path: join(paths.runtimeDir, 'lib', 'large'), mode: 0o644, data: Buffer.concat([Buffer.alloc(ONE_BLOCK_MAX, 3), ALL_BYTES.subarray(0, 123)]) }]),
    ];
    const { script, stdin } = bootstrapUpload({ roots: [paths.runtimeDir], files, tail: { path: paths.agentctl, mode: 0o755, data: ALL_BYTES } });
    const r = runSh(shell, script, { input: Buffer.concat(stdin), env });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    for (const f of files) expect(readFileSync(f.path).equals(f.data), f.path).toBe(true);
    expect(readFileSync(paths.agentctl).equals(ALL_BYTES)).toBe(true);
  });

  it('runs the final step after the files and before the marker, and stops on its failure', () => {
    const { paths } = setup();
    const files = [{ path: paths.runtimeEnv, mode: 0o600, data: Buffer.from('ok') }];
    const ok = bootstrapUpload({ roots: [paths.runtimeDir], files, finalStep: [`cat '${paths.runtimeEnv}' >'${paths.runtimeDir}/seen'`], marker: paths.startMarker });
    expect(runSh(shell, ok.script, { input: Buffer.concat(ok.stdin) }).status).toBe(0);
    expect(readFileSync(join(paths.runtimeDir, 'seen'), 'utf8')).toBe('ok');
    rmSync(paths.startMarker);
    const bad = bootstrapUpload({ roots: [paths.runtimeDir], files: [], finalStep: ['exit 9'], marker: paths.startMarker });
    expect(runSh(shell, bad.script).status).toBe(9);
    expect(existsSync(paths.startMarker)).toBe(false);
  });

  it('refuses a symlinked parent directory and writes nothing through it', () => {
    const { dir, paths } = setup();
    const outside = join(dir, 'outside');
    mkdirSync(outside);
    symlinkSync(outside, paths.home);
    const { script, stdin } = bootstrapUpload({
      roots: [paths.authDir],
      files: [{ path: join(paths.home, '.config', 'x'), mode: 0o600, data: Buffer.from('secret') }],
      marker: null,
    });
    const r = runSh(shell, script, { input: Buffer.concat(stdin) });
    expect(r.status).toBe(EXIT_UNSAFE_DESTINATION);
    expect(r.stderr).toContain('refusing symlinked directory');
    expect(readdirSync(outside)).toEqual([]);
  });

  it('refuses a destination that is a symlink or a non-directory parent', () => {
    const { dir, paths } = setup();
    writeFileSync(join(dir, 'target'), 'keep');
    symlinkSync(join(dir, 'target'), paths.authEnv);
    const link = bootstrapUpload({ roots: [paths.authDir], files: [{ path: paths.authEnv, mode: 0o600, data: Buffer.from('x') }] });
    expect(runSh(shell, link.script, { input: Buffer.concat(link.stdin) }).status).toBe(EXIT_UNSAFE_DESTINATION);
    expect(readFileSync(join(dir, 'target'), 'utf8')).toBe('keep');
    writeFileSync(join(paths.runtimeDir, 'file'), '');
    const parent = bootstrapUpload({ roots: [paths.runtimeDir], files: [{ path: join(paths.runtimeDir, 'file', 'x'), mode: 0o600, data: Buffer.from('x') }] });
    const r = runSh(shell, parent.script, { input: Buffer.concat(parent.stdin) });
    expect(r.status).toBe(EXIT_UNSAFE_DESTINATION);
    expect(r.stderr).toContain('is not a directory');
  });

  it('fails without installing a file when stdin ends early', () => {
    const { paths } = setup();
    const { script, stdin } = bootstrapUpload({
      roots: [paths.runtimeDir],
      files: [{ path: paths.runtimeEnv, mode: 0o600, data: Buffer.from('0123456789') }],
      marker: paths.startMarker,
    });
    const r = runSh(shell, script, { input: Buffer.concat(stdin).subarray(0, 4) });
    expect(r.status).toBe(EXIT_SHORT_WRITE);
    expect(existsSync(paths.runtimeEnv)).toBe(false);
    expect(existsSync(paths.startMarker)).toBe(false);
    expect(readdirSync(paths.runtimeDir)).toEqual([]);
  });
});

describe('bootstrapUpload', () => {
  it.each([
    ['a relative path', 'opt/x'],
    ['a path with ..', '/opt/berth/../etc/passwd'],
    ['a path outside the roots', '/etc/passwd'],
    ['the root itself', '/opt/berth'],
  ])('rejects %s', (_name, path) => {
    expect(() => bootstrapUpload({ roots: ['/opt/berth'], files: [{ path, mode: 0o600, data: Buffer.from('x') }] })).toThrow(ComposeFieldError);
  });

  it('passes the tail through without copying it', () => {
    const tail = Buffer.alloc(1024, 1);
    const { stdin } = bootstrapUpload({ roots: ['/opt/berth'], files: [], tail: { path: '/opt/berth/agentctl', mode: 0o755, data: tail } });
    expect(stdin).toHaveLength(1);
    expect(stdin[0]!.buffer).toBe(tail.buffer);
  });
});
