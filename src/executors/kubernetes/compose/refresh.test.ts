import { describe, expect, it } from 'vitest';
import { memberFetchScript, refreshScript } from './refresh.js';

describe('refreshScript (a repository pool claim)', () => {
  it("fetches, then resets the member's branch to its origin's, or checks out the branch asked for at its tip", () => {
    const own = refreshScript({ branch: null, credentialsUrl: null, setupScript: '' });
    expect(own).toContain('git fetch -q --prune origin');
    expect(own).toContain('git reset -q --hard "origin/$cur"');
    expect(own).not.toContain('credential.');
    const feature = refreshScript({ branch: 'feature/x', credentialsUrl: null, setupScript: '' });
    expect(feature).toContain("git checkout -q -B 'feature/x' 'origin/feature/x'");
  });

  it('runs the setup script only when the checkout moved, and uses and removes a clone credential', () => {
    const s = refreshScript({ branch: null, credentialsUrl: 'https://git.example/app.git', setupScript: 'make deps' });
    expect(s).toMatch(/if \[ "\$before" != "\$after" \]; then[\s\S]*sh -e -c 'make deps'/);
    expect(s).toContain("-c credential.helper= -c 'credential.https://git.example.helper=");
    expect(s.indexOf('rm -f')).toBeGreaterThan(s.indexOf('git -c credential.helper='));
  });

  it('refuses a branch that could be an option', () => {
    expect(() => refreshScript({ branch: '--upload-pack=x', credentialsUrl: null, setupScript: '' })).toThrow(/repository\.branch: must be a branch name/);
  });

  it("the scheduled fetch loads the Pod's environment files first (HOME is the private one)", () => {
    const s = memberFetchScript();
    expect(s.indexOf('auth.env')).toBeLessThan(s.indexOf('git fetch'));
  });
});
