import { describe, expect, it } from 'vitest';
import { resolveConfig } from './config.js';

const resolveRaw = (raw: unknown) => resolveConfig(raw, { source: '/etc/berth.yaml', installRoot: '/opt/berth' });
const TEMPLATE = 'spec:\n  containers: [{ name: agent, image: x }]\n';
const PROXY = { url: 'http://10.0.0.1:3128' };
const withNetwork = (network: unknown, extra: { executor?: Record<string, unknown>; profile?: Record<string, unknown>; top?: Record<string, unknown> } = {}) =>
  resolveRaw({
    executors: { cluster: { type: 'kubernetes', namespace: 'ns', egress_proxy: PROXY, ...extra.executor } },
    profiles: { k8s: { executor: 'cluster', kubernetes: { pod_template: TEMPLATE }, network, ...extra.profile } },
    ...extra.top,
  });

describe('network: on a profile', () => {
  it('resolves an allow list, normalised, with no blocked-address exceptions', () => {
    expect(withNetwork({ egress: 'allowlist', allow: ['API.Example.com', '*.github.com', 'api.example.com'] }).profiles.k8s?.network).toEqual({
      egress: 'allowlist',
      allow: ['api.example.com', '*.github.com'],
      allowClusterApi: false,
      allowMetadata: false,
      brokers: {},
    });
    expect(withNetwork(undefined).profiles.k8s?.network, 'no policy unless configured').toBeUndefined();
  });

  it('resolves open with its exceptions, and brokers naming approved secrets', () => {
    const cfg = withNetwork({ egress: 'open', allow_metadata: true, brokers: { anthropic: 'ANTHROPIC_API_KEY' } }, { profile: { secret_env: ['ANTHROPIC_API_KEY'] } });
    expect(cfg.profiles.k8s?.network).toEqual({ egress: 'open', allow: [], allowClusterApi: false, allowMetadata: true, brokers: { anthropic: 'ANTHROPIC_API_KEY' } });
    // the executor's approval counts too
    expect(withNetwork({ egress: 'deny', brokers: { openai: 'OPENAI_KEY' } }, { executor: { secret_env: ['OPENAI_KEY'] } }).profiles.k8s?.network?.brokers).toEqual({ openai: 'OPENAI_KEY' });
  });

  it('names the field of each mistake', () => {
    expect(() => withNetwork({ egress: 'closed' })).toThrow(/profiles\.k8s\.network\.egress: must be open, deny or allowlist/);
    expect(() => withNetwork({ egress: 'allowlist' })).toThrow(/profiles\.k8s\.network\.allow: must list at least one host name/);
    expect(() => withNetwork({ egress: 'deny', allow: ['a.example'] })).toThrow(/profiles\.k8s\.network\.allow: is only allowed with egress: allowlist/);
    expect(() => withNetwork({ egress: 'allowlist', allow: ['ok.example', '*.com'] })).toThrow(/profiles\.k8s\.network\.allow\[1\]: "\*\.com" is too broad/);
    expect(() => withNetwork({ egress: 'allowlist', allow: ['a b'] })).toThrow(/profiles\.k8s\.network\.allow\[0\]: "a b" is not a hostname/);
    expect(() => withNetwork({ egress: 'deny', allow_metadata: true })).toThrow(/profiles\.k8s\.network\.allow_metadata: is only allowed with egress: open/);
    expect(() => withNetwork({ egress: 'deny', brokers: { anthropic: 'ANTHROPIC_API_KEY' } })).toThrow(/profiles\.k8s\.network\.brokers\.anthropic: ANTHROPIC_API_KEY must be approved in the profile's or its executor's secret_env/);
    expect(() => withNetwork({ egress: 'deny', brokers: { gemini: 'K' } }, { profile: { secret_env: ['K'] } })).toThrow(/profiles\.k8s\.network\.brokers\.gemini: is not a provider Berth brokers \(anthropic, openai\)/);
    expect(() => withNetwork({ egress: 'deny', extra: 1 })).toThrow(/profiles\.k8s\.network\.extra: is not a known setting/);
  });

  it('needs the executor to say where its Pods reach the proxy, and no pool', () => {
    expect(() => withNetwork({ egress: 'allowlist', allow: ['a.example'] }, { executor: { egress_proxy: undefined } })).toThrow(
      /profiles\.k8s\.network: needs the egress proxy: set executors\.cluster\.egress_proxy\.url/,
    );
    // deny and open without brokers use no proxy
    expect(withNetwork({ egress: 'deny' }, { executor: { egress_proxy: undefined } }).profiles.k8s?.network?.egress).toBe('deny');
    expect(() => withNetwork({ egress: 'deny' }, { profile: { pool: { size: 1 } } })).toThrow(/profiles\.k8s\.pool: cannot be combined with network: yet/);
  });

  it('on a local executor: needs the sandbox, and open is refused (a sandbox has its own network or none)', () => {
    const local = (sandbox: string, network: unknown) => resolveRaw({ executors: { box: { type: 'local', sandbox } }, profiles: { p: { executor: 'box', network } } });
    expect(local('bubblewrap', { egress: 'allowlist', allow: ['a.example'] }).profiles.p?.network?.egress).toBe('allowlist');
    expect(() => local('none', { egress: 'deny' })).toThrow(/profiles\.p\.network: needs the sandbox: executor 'box' runs agents with sandbox: none/);
    expect(() => local('bubblewrap', { egress: 'open' })).toThrow(/profiles\.p\.network\.egress: open is for kubernetes executors/);
  });

  it('checks egress_proxy and the top-level egress block', () => {
    expect(withNetwork({ egress: 'deny' }, { executor: { egress_proxy: { url: 'http://proxy.berth.svc:3128', namespace: 'berth', pod_labels: { app: 'egress' } } } }).executors.cluster).toMatchObject({
      egressProxy: { url: 'http://proxy.berth.svc:3128', pods: { namespace: 'berth', labels: { app: 'egress' } } },
    });
    expect(() => withNetwork({ egress: 'deny' }, { executor: { egress_proxy: { url: 'http://proxy.berth.svc:3128' } } })).toThrow(/executors\.cluster\.egress_proxy\.url: must name the proxy by IP address unless pod_labels/);
    expect(() => withNetwork({ egress: 'deny' }, { executor: { egress_proxy: { url: 'https://u:p@10.0.0.1:3128' } } })).toThrow(/executors\.cluster\.egress_proxy\.url: must be http:\/\/host:port/);
    const top = withNetwork({ egress: 'deny' }, { top: { egress: { listen: '10.0.0.1:3128', hosts: { 'Models.Test': '10.0.0.9' }, brokers: { anthropic: { upstream: 'https://models.test:8443/' } } } } }).egress;
    expect(top).toEqual({ listen: { host: '10.0.0.1', port: 3128 }, hosts: { 'models.test': '10.0.0.9' }, brokers: { anthropic: { upstream: 'https://models.test:8443' } }, caFile: null });
    expect(() => withNetwork({ egress: 'deny' }, { top: { egress: { listen: '3128' } } })).toThrow(/egress\.listen: must be host:port/);
    expect(() => withNetwork({ egress: 'deny' }, { top: { egress: { hosts: { a: 'nope' } } } })).toThrow(/egress\.hosts\.a: must be an IP address/);
    expect(() => withNetwork({ egress: 'deny' }, { top: { egress: { brokers: { anthropic: { upstream: 'http://x' } } } } })).toThrow(/egress\.brokers\.anthropic\.upstream: must be an https URL/);
  });

  it('holds one key per provider: profiles brokering it must name the same secret', () => {
    const raw = {
      executors: { cluster: { type: 'kubernetes', namespace: 'ns', egress_proxy: PROXY, secret_env: ['A', 'B'] } },
      profiles: {
        one: { executor: 'cluster', kubernetes: { pod_template: TEMPLATE }, network: { egress: 'deny', brokers: { anthropic: 'A' } } },
        two: { executor: 'cluster', kubernetes: { pod_template: TEMPLATE }, network: { egress: 'deny', brokers: { anthropic: 'B' } } },
      },
    };
    expect(() => resolveRaw(raw)).toThrow(/profiles\.two\.network\.brokers\.anthropic: must name the same secret as profiles\.one \(A\)/);
  });
});
