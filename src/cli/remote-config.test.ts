import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  defaultContextName,
  loadRemoteConfig,
  normalizeServerUrl,
  parseRemoteConfig,
  remoteConfigPath,
  resolveTarget,
  saveRemoteConfig,
  type RemoteConfig,
} from './remote-config.js';
import { describeRemoteError, tlsFailure } from './remote-errors.js';

const FILE = '/home/u/.config/berth/config.yaml';

describe('config.yaml parsing', () => {
  it('reads contexts and the current one', () => {
    const cfg = parseRemoteConfig('current: team\ncontexts:\n  team:\n    server: https://berth.example.com\n    token: t0k\n    ca: /etc/ca.pem\n', FILE);
    expect(cfg).toEqual({ current: 'team', contexts: { team: { server: 'https://berth.example.com', token: 't0k', ca: '/etc/ca.pem' } } });
  });

  it('treats an empty file as no contexts', () => {
    expect(parseRemoteConfig('', FILE)).toEqual({ contexts: {} });
  });

  it.each([
    ['contexts:\n  team:\n    server: ftp://x\n    token: t\n', 'contexts.team.server: must be an https:// URL'],
    ['contexts:\n  team:\n    server: http://berth.example.com\n    token: t\n', 'contexts.team.server: must be an https:// URL (http:// on loopback only)'],
    ['contexts:\n  team:\n    server: https://x\n', 'contexts.team.token'],
    ['contexts:\n  team:\n    server: https://x\n    token: t\n    tokn: t\n', 'contexts.team.tokn: unknown field'],
    ['contexts:\n  "bad name":\n    server: https://x\n    token: t\n', 'contexts.bad name'],
    ['current: other\ncontexts: {}\n', 'current: no context named "other"'],
    ['contexts: [1, 2]\n', 'contexts:'],
    ['contexts:\n  team: {server: https://x\n', 'not valid YAML'],
  ])('names the field of a bad file: %j', (text, message) => {
    expect(() => parseRemoteConfig(text, FILE)).toThrow(`${FILE}: ${message}`);
  });

  it('lives under $XDG_CONFIG_HOME, else ~/.config', () => {
    expect(remoteConfigPath({ XDG_CONFIG_HOME: '/xdg', HOME: '/home/u' })).toBe('/xdg/berth/config.yaml');
    expect(remoteConfigPath({ HOME: '/home/u' })).toBe(FILE);
    // the XDG spec: a relative value is ignored
    expect(remoteConfigPath({ XDG_CONFIG_HOME: 'rel', HOME: '/home/u' })).toBe(FILE);
  });
});

describe('saving', () => {
  let dir: string | undefined;
  afterEach(() => dir && rmSync(dir, { recursive: true, force: true }));

  it('writes the file with mode 0600 and reads it back', () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-remote-config-'));
    const file = join(dir, 'berth', 'config.yaml');
    expect(loadRemoteConfig(file)).toEqual({ contexts: {} });
    const cfg: RemoteConfig = { current: 'a', contexts: { a: { server: 'https://a.example', token: 'secret' } } };
    saveRemoteConfig(file, cfg);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, 'berth')).mode & 0o777).toBe(0o700);
    expect(loadRemoteConfig(file)).toEqual(cfg);
  });
});

describe('server URLs', () => {
  it('normalizes and refuses what would leak the token', () => {
    expect(normalizeServerUrl('https://Berth.Example.com/')).toBe('https://berth.example.com');
    expect(normalizeServerUrl('https://h:8443/berth/')).toBe('https://h:8443/berth');
    expect(normalizeServerUrl('http://127.0.0.1:7420')).toBe('http://127.0.0.1:7420');
    expect(() => normalizeServerUrl('http://berth.example.com')).toThrow('plain http is allowed on loopback only');
    expect(() => normalizeServerUrl('https://u:p@h')).toThrow('must not carry credentials');
    expect(() => normalizeServerUrl('berth.example.com')).toThrow('is not a URL');
  });

  it('names a context after the host and port', () => {
    expect(defaultContextName('https://berth.example.com')).toBe('berth.example.com');
    expect(defaultContextName('https://127.0.0.1:8443')).toBe('127.0.0.1-8443');
  });
});

describe('precedence', () => {
  const cfg: RemoteConfig = {
    current: 'team',
    contexts: {
      team: { server: 'https://team.example', token: 'team-token', ca: '/ca.pem' },
      other: { server: 'https://other.example', token: 'other-token' },
    },
  };
  const load = (): RemoteConfig => cfg;
  const broken = (): RemoteConfig => {
    throw new Error('config.yaml must not be read');
  };

  it('--server first, with the token and CA of the context for that URL', () => {
    expect(resolveTarget({ server: 'https://other.example/' }, { BERTH_SERVER: 'https://team.example' }, load)).toEqual({
      kind: 'remote', server: 'https://other.example', token: 'other-token', context: 'other', source: 'flag',
    });
  });

  it('a server no context knows goes without a token (the server answers 401: berth login)', () => {
    expect(resolveTarget({ server: 'https://new.example' }, {}, load)).toMatchObject({ kind: 'remote', token: null, context: null });
  });

  it('refuses --server together with --data-dir', () => {
    expect(() => resolveTarget({ server: 'https://x.example', dataDir: '/d' }, {}, load)).toThrow('give --server or --data-dir, not both');
  });

  it('--data-dir means local, whatever the environment and the contexts say (the config is not read)', () => {
    expect(resolveTarget({ dataDir: '/d' }, { BERTH_SERVER: 'https://team.example' }, broken)).toEqual({ kind: 'local', dataDir: '/d' });
  });

  it('$BERTH_SERVER before $BERTH_DATA_DIR and the current context', () => {
    expect(resolveTarget({}, { BERTH_SERVER: 'https://team.example', BERTH_DATA_DIR: '/d' }, load)).toMatchObject({ server: 'https://team.example', token: 'team-token', ca: '/ca.pem', source: 'env' });
  });

  it('$BERTH_DATA_DIR before the current context', () => {
    expect(resolveTarget({}, { BERTH_DATA_DIR: '/d' }, broken)).toEqual({ kind: 'local' });
  });

  it('then the current context, else the local data dir', () => {
    expect(resolveTarget({}, {}, load)).toEqual({ kind: 'remote', server: 'https://team.example', token: 'team-token', ca: '/ca.pem', context: 'team', source: 'context' });
    expect(resolveTarget({}, {}, () => ({ contexts: cfg.contexts }))).toEqual({ kind: 'local' });
  });
});

describe('remote error reports', () => {
  it('names --ca for a TLS verification failure found in the cause chain', () => {
    const tls = Object.assign(new Error('unable to verify the first certificate'), { code: 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' });
    const err = Object.assign(new Error('cannot reach'), { name: 'ControllerUnreachableError', cause: new TypeError('fetch failed', { cause: tls }) });
    expect(tlsFailure(err)?.code).toBe('UNABLE_TO_VERIFY_LEAF_SIGNATURE');
    const report = describeRemoteError(err, 'https://h', 'team');
    expect(report).toMatchObject({ code: 5, message: 'TLS verification of https://h failed: unable to verify the first certificate (UNABLE_TO_VERIFY_LEAF_SIGNATURE)' });
    expect(report?.hint).toContain('berth login https://h --name team --ca FILE');
  });

  it('says berth login on a 401, and where to look when nothing answers', () => {
    const unauthorized = Object.assign(new Error('missing or invalid token'), { name: 'BerthApiError', status: 401 });
    expect(describeRemoteError(unauthorized, 'https://h', null)?.hint).toBe('log in with a current token: berth login https://h');
    const refused = Object.assign(new Error('x'), { name: 'ControllerUnreachableError', cause: new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }) });
    expect(describeRemoteError(refused, 'https://h', null)).toMatchObject({ code: 5, message: 'cannot reach the berth controller at https://h (ECONNREFUSED)' });
  });
});
