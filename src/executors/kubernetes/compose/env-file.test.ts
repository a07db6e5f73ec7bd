import { describe, expect, it } from 'vitest';
import { AGENTCTL_STATE_DIR, PATH } from '../constants.js';
import { authEnv, nonceFileContent, runtimeEnv, serializeEnvFile } from './env-file.js';
import { ComposeFieldError } from './errors.js';
import { bootstrapPaths } from './paths.js';
import { IDENTITY, runSh, SHELLS } from '../testing/compose-fixtures.js';

const TRICKY: Record<string, string> = {
  QUOTE: "it's 'quoted'",
  NEWLINES: 'line 1\nline 2\n',
  DOLLAR: '$HOME ${PATH} $(id) $((1+1))',
  BACKTICK: '`id` \\ \\n',
  EMPTY: '',
  SPACES: '  padded  ',
};

describe('serializeEnvFile', () => {
  it('sorts keys and single-quotes values', () => {
    expect(serializeEnvFile({ B: '2', A: "x'y" })).toBe("A='x'\\''y'\nB='2'\n");
  });

  it.each(SHELLS)('round-trips quotes, newlines, $ and backticks when sourced by %s', (_label, shell) => {
    const file = serializeEnvFile(TRICKY);
    const script = `set -a\n${file}set +a\nfor k in ${Object.keys(TRICKY).join(' ')}; do eval "printf '%s\\0' \\"\\$$k\\""; done`;
    const r = runSh(shell, script);
    expect(r.status).toBe(0);
    expect(r.stdout.split('\0').slice(0, -1)).toEqual(Object.values(TRICKY));
  });

  it.each(['1ABC', 'A-B', 'A B', '', 'Ä'])('rejects the key %j', (key) => {
    expect(() => serializeEnvFile({ [key]: 'v' })).toThrow(ComposeFieldError);
  });

  it('rejects NUL in a value without echoing it', () => {
    let caught: unknown;
    try {
      serializeEnvFile({ TOKEN: 'sec\0ret' });
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ComposeFieldError);
    expect((caught as ComposeFieldError).path).toBe('env.TOKEN');
    expect((caught as Error).message).not.toContain('sec');
  });
});

describe('runtimeEnv and authEnv', () => {
  it('gives agentctl its ports, a state dir on the workspace volume and the session identity', () => {
    expect(runtimeEnv(IDENTITY, 'sea', bootstrapPaths())).toEqual({
      AGENTCTL_PORT: '8765',
      AGENTCTL_INSTANCE_PORTS: '41001-41100',
      AGENTCTL_STATE_DIR: AGENTCTL_STATE_DIR,
      AGENTCTL_BOOTSTRAP_NONCE_FILE: '/run/berth/nonce',
      BERTH_SESSION_ID: 'ses-1',
      BERTH_INSTANCE_ID: 'instance-1',
      BERTH_WORKSPACE: '/workspace',
      BERTH_AGENTCTL_FLAVOR: 'sea',
    });
    expect(AGENTCTL_STATE_DIR.startsWith(`${PATH.workspace}/`)).toBe(true);
  });

  it('keeps the nonce out of both env files: runtime.env names its file, auth.env holds HOME only', () => {
    expect(runtimeEnv(IDENTITY, 'bundle', bootstrapPaths())).toMatchObject({ AGENTCTL_BOOTSTRAP_NONCE_FILE: '/run/berth/nonce' });
    expect(authEnv(bootstrapPaths())).toEqual({ HOME: '/run/berth/home' });
    expect(nonceFileContent('ab'.repeat(32))).toBe(`${'ab'.repeat(32)}\n`);
    expect(() => nonceFileContent("x'; rm -rf /; '")).toThrow(ComposeFieldError);
  });
});
