import { describe, expect, it } from 'vitest';
import { repositoryRef } from './launch-request.js';

describe('repositoryRef', () => {
  it('tells clone URLs from local paths and adds the branch', () => {
    expect(repositoryRef('https://host/org/app.git', 'main')).toEqual({ url: 'https://host/org/app.git', branch: 'main' });
    expect(repositoryRef('git@github.com:org/app.git', '')).toEqual({ url: 'git@github.com:org/app.git' });
    expect(repositoryRef('file:///srv/app', ' dev ')).toEqual({ url: 'file:///srv/app', branch: 'dev' });
    expect(repositoryRef(' /home/me/app ', '')).toEqual({ path: '/home/me/app' });
    expect(repositoryRef('   ', 'main')).toBeUndefined();
  });
});
