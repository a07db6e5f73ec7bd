import { describe, expect, it } from 'vitest';
import { childEnv, inheritedEnv, parsePassEnv } from './child-env.js';

describe('childEnv', () => {
  it('inherits only the base names of agentctl env, then layers instance then process env on top', () => {
    const env = childEnv(
      { PATH: '/bin', HOME: '/home/u', LC_ALL: 'C', AGENTCTL_BOOTSTRAP_NONCE: 'secret', MY_SECRET: 'x', B: '1' },
      { B: '2', C: '2' },
      { C: '3' },
    );
    expect(env).toEqual({ PATH: '/bin', HOME: '/home/u', LC_ALL: 'C', B: '2', C: '3' });
  });

  it('passes the names listed in AGENTCTL_PASS_ENV, and no AGENTCTL_* variable even when listed or requested', () => {
    const base = { PATH: '/bin', AGENTCTL_PASS_ENV: 'FROM_POD, OTHER', FROM_POD: 'p', OTHER: 'o', NOT_LISTED: 'n', AGENTCTL_PORT: '1' };
    expect(childEnv(base, { AGENTCTL_PORT: '2' }, { AGENTCTL_BOOTSTRAP_NONCE: 'n' })).toEqual({ PATH: '/bin', FROM_POD: 'p', OTHER: 'o' });
  });

  it('passes nothing extra when AGENTCTL_PASS_ENV is invalid', () => {
    expect(inheritedEnv({ PATH: '/bin', AGENTCTL_PASS_ENV: 'OK,bad-name', OK: '1' })).toEqual({ PATH: '/bin' });
  });
});

describe('parsePassEnv', () => {
  it.each([
    ['', []],
    ['A', ['A']],
    [' A , B_2,,', ['A', 'B_2']],
  ])('parses %j', (raw, names) => {
    expect(parsePassEnv(raw)).toEqual({ names });
  });

  it.each([
    ['A,1B', '1B'],
    ['A,has space', 'has space'],
    ['AGENTCTL_BOOTSTRAP_NONCE', 'AGENTCTL_BOOTSTRAP_NONCE'],
  ])('refuses %j naming the bad entry', (raw, invalid) => {
    expect(parsePassEnv(raw)).toMatchObject({ invalid });
  });
});
