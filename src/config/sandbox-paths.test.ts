import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config.js';
import { ConfigFieldError } from '../shared/config-field-error.js';

const resolve = (local: Record<string, unknown>) =>
  resolveConfig({ executors: { local: { type: 'local', ...local } } }, { source: '/etc/berth/berth.yaml', installRoot: '/opt/berth', homeDir: '/home/u' });

describe('executors.<name>.sandbox_hide / sandbox_expose', () => {
  it('expands ~/ against the home and keeps absolute paths, normalized', () => {
    const local = resolve({ sandbox_hide: ['~/.config/secret-tool', '/srv/keys/'], sandbox_expose: ['~/.gitconfig', '/etc/../opt/tools'] }).executors.local;
    expect(local).toMatchObject({ sandboxHide: ['/home/u/.config/secret-tool', '/srv/keys'], sandboxExpose: ['/home/u/.gitconfig', '/opt/tools'] });
  });

  it('defaults to empty lists', () => {
    expect(resolve({}).executors.local).toMatchObject({ sandboxHide: [], sandboxExpose: [] });
  });

  it.each([
    [{ sandbox_expose: ['.gitconfig'] }, 'executors.local.sandbox_expose[0]', 'must be an absolute path or start with ~/'],
    [{ sandbox_hide: ['/ok', '~user/x'] }, 'executors.local.sandbox_hide[1]', 'must be an absolute path or start with ~/'],
    [{ sandbox_hide: ['/'] }, 'executors.local.sandbox_hide[0]', 'must not be / (name the files or directories themselves)'],
    [{ sandbox_hide: ['~/a'], sandbox_expose: ['/x', '~/a'] }, 'executors.local.sandbox_expose[1]', 'is also listed in sandbox_hide (choose one)'],
  ])('refuses %j naming the entry', (local, path, detail) => {
    let err: unknown;
    try {
      resolve(local);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigFieldError);
    expect(err).toMatchObject({ path, detail });
    expect((err as Error).message).toBe(`${path}: ${detail} (in /etc/berth/berth.yaml)`);
  });

  it('refuses a list that is not a list of strings', () => {
    expect(() => resolve({ sandbox_expose: '~/.gitconfig' })).toThrow(/executors\.local\.sandbox_expose: must be a list of paths/);
  });
});
