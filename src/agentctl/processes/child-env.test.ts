import { describe, expect, it } from 'vitest';
import { childEnv } from './child-env.js';

describe('childEnv', () => {
  it('drops AGENTCTL_* variables and layers instance then process env on top', () => {
    const env = childEnv({ PATH: '/bin', AGENTCTL_BOOTSTRAP_NONCE: 'secret', A: '1', B: '1' }, { B: '2', C: '2' }, { C: '3' });
    expect(env).toEqual({ PATH: '/bin', A: '1', B: '2', C: '3' });
  });
});
