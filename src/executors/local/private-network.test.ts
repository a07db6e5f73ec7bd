import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LaunchError } from '../launch-kit/index.js';
import { encodeNetworkSettings, NETWORK_SETTING, type NetworkSettings } from '../network.js';
import { decodeLocalMetadata, encodeLocalMetadata } from './metadata.js';
import { privateNetworkEnv, privateNetworkFor, privateNetworkPlan, SANDBOX_EGRESS_DIR } from './private-network.js';
import { bwrapArgs, type LaunchSandbox, type SandboxPlan } from './sandbox.js';

const bubblewrap: LaunchSandbox = { kind: 'bubblewrap', network: true, hide: [], readOnly: [], expose: [], homes: [] };
const allowlist: NetworkSettings = { egress: 'allowlist', allow: ['api.example.com'], allowClusterApi: false, allowMetadata: false, brokers: {} };
const settingsOf = (n: NetworkSettings): Record<string, string> => ({ agentctl_path: '/x', [NETWORK_SETTING]: encodeNetworkSettings(n) });

const plan: SandboxPlan = {
  hide: ['/data'],
  hideFiles: [],
  writable: ['/data/workspaces/s-1/repo'],
  readOnly: ['/opt/berth/dist/agentctl.cjs'],
  readOnlyAt: [],
  network: true,
  cwd: '/data/workspaces/s-1/repo',
};

function launchError(fn: () => unknown): LaunchError {
  try {
    fn();
  } catch (err) {
    if (err instanceof LaunchError) return err;
    throw err;
  }
  throw new Error('expected a LaunchError');
}

describe('the private network of a local session under a network policy', () => {
  let dir: string;
  let proxy: Server;
  let socket: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'berth-privnet-'));
    socket = join(dir, 'egress.sock');
    proxy = createServer();
    await new Promise<void>((r) => proxy.listen(socket, r));
  });

  afterAll(async () => {
    await new Promise((r) => proxy.close(r));
    rmSync(dir, { recursive: true, force: true });
  });

  it('is none without network settings: the sandbox keeps the executor network', () => {
    expect(privateNetworkFor({ agentctl_path: '/x' }, bubblewrap, socket)).toBeNull();
    expect(privateNetworkFor({}, { kind: 'none', warning: null }, null)).toBeNull();
  });

  it('binds the egress socket (its real path) when the settings use the proxy, nothing when they do not', () => {
    const link = join(dir, 'link.sock');
    symlinkSync(socket, link);
    expect(privateNetworkFor(settingsOf(allowlist), bubblewrap, link)).toEqual({ egressSocket: socket });
    expect(privateNetworkFor(settingsOf({ ...allowlist, egress: 'deny', allow: [] }), bubblewrap, null)).toEqual({ egressSocket: null });
    expect(privateNetworkFor(settingsOf({ ...allowlist, egress: 'deny', allow: [], brokers: { anthropic: 'KEY' } }), bubblewrap, socket)).toEqual({ egressSocket: socket });
  });

  it('needs the sandbox: a policy on an unsandboxed executor fails the agentctl_start stage', () => {
    for (const sandbox of [{ kind: 'none', warning: null }, { kind: 'none', warning: 'no bwrap' }] as const) {
      const err = launchError(() => privateNetworkFor(settingsOf(allowlist), sandbox, socket));
      expect(err).toMatchObject({ stage: 'agentctl_start', reason: 'SandboxRequired' });
      expect(err.message).toContain('needs the bubblewrap sandbox');
    }
  });

  it('fails clearly when the egress proxy is not running (no socket, not a socket, none configured)', () => {
    const file = join(dir, 'plain-file');
    writeFileSync(file, '');
    for (const path of [join(dir, 'absent.sock'), file, null]) {
      const err = launchError(() => privateNetworkFor(settingsOf(allowlist), bubblewrap, path));
      expect(err).toMatchObject({ stage: 'agentctl_start', reason: 'EgressProxyUnavailable' });
      expect(err.message).toContain('the egress proxy of berth serve is not running');
    }
  });

  it('rejects corrupt recorded settings', () => {
    expect(launchError(() => privateNetworkFor({ [NETWORK_SETTING]: '{' }, bubblewrap, socket))).toMatchObject({ reason: 'InvalidNetworkSettings' });
  });

  it("unshares the network and binds the egress socket's directory read-only into the private /tmp", () => {
    const args = bwrapArgs(privateNetworkPlan(plan, { egressSocket: socket }));
    expect(args).toContain('--unshare-net');
    const tmp = args.findIndex((v, i) => v === '--tmpfs' && args[i + 1] === '/tmp');
    const bind = args.findIndex((v, i) => v === '--ro-bind' && args[i + 1] === dir && args[i + 2] === SANDBOX_EGRESS_DIR);
    expect(bind).toBeGreaterThan(tmp);
    expect(SANDBOX_EGRESS_DIR.startsWith('/tmp/')).toBe(true);
    expect(privateNetworkEnv({ egressSocket: socket })).toEqual({ AGENTCTL_EGRESS_RELAY: `127.0.0.1:3128=${SANDBOX_EGRESS_DIR}/egress.sock` });
  });

  it('without the proxy: no network, no bind, no relay', () => {
    const args = bwrapArgs(privateNetworkPlan(plan, { egressSocket: null }));
    expect(args).toContain('--unshare-net');
    expect(args).not.toContain(SANDBOX_EGRESS_DIR);
    expect(privateNetworkEnv({ egressSocket: null })).toEqual({});
  });

  it('is recorded in the metadata, so a restarted controller reaches agentctl through the socket', () => {
    const meta = { instanceId: 'i', sessionDir: '/d/workspaces/s', workspacePath: '/d/workspaces/s/repo', workspaceCreated: true, launchKind: 'fresh' as const, agentctlPath: '/a', agentctlPid: 7, agentctlProcStart: '1', controlPort: null, instancePort: 4 };
    const encoded = encodeLocalMetadata({ ...meta, privateNetwork: true }, 'ready');
    expect(encoded['local_private_network']).toBe('true');
    expect(decodeLocalMetadata(encoded)).toEqual({ ...meta, privateNetwork: true });
    expect(decodeLocalMetadata(encodeLocalMetadata({ ...meta, privateNetwork: false }, 'ready')).privateNetwork).toBeUndefined();
  });
});
