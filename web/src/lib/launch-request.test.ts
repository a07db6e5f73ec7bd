import { describe, expect, it } from 'vitest';
import { EMPTY_LAUNCH_FIELDS, launchRequestOf, repositoryRef } from './launch-request.js';

describe('repositoryRef', () => {
  it('tells clone URLs from local paths and adds the branch', () => {
    expect(repositoryRef('https://host/org/app.git', 'main')).toEqual({ url: 'https://host/org/app.git', branch: 'main' });
    expect(repositoryRef('git@github.com:org/app.git', '')).toEqual({ url: 'git@github.com:org/app.git' });
    expect(repositoryRef('file:///srv/app', ' dev ')).toEqual({ url: 'file:///srv/app', branch: 'dev' });
    expect(repositoryRef(' /home/me/app ', '')).toEqual({ path: '/home/me/app' });
    expect(repositoryRef('   ', 'main')).toBeUndefined();
  });
});

describe('launchRequestOf', () => {
  it('leaves empty fields out', () => {
    expect(launchRequestOf(EMPTY_LAUNCH_FIELDS, {})).toEqual({});
    expect(launchRequestOf({ ...EMPTY_LAUNCH_FIELDS, name: '  ', prompt: ' \n' }, {})).toEqual({});
  });

  it('takes every field that is set, the prompt as typed and the name trimmed', () => {
    const fields = { repository: '/srv/app', branch: 'dev', agent: 'demo', executor: 'k8s', name: ' fix ', prompt: ' go\n', env: 'A=1' };
    expect(launchRequestOf(fields, { A: '1' })).toEqual({
      repository: { path: '/srv/app', branch: 'dev' },
      agent: 'demo',
      executor: 'k8s',
      name: 'fix',
      prompt: ' go\n',
      env: { A: '1' },
    });
  });
});
