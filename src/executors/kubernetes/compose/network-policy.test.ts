import { describe, expect, it } from 'vitest';
import type { NetworkSettings } from '../../network.js';
import { composeNetworkPolicy } from './network-policy.js';

const identity = { instanceId: 'inst-1', sessionId: 'sess-1', executor: 'cluster', profile: 'k8s' };
const base = (settings: Partial<NetworkSettings>, proxy: Parameters<typeof composeNetworkPolicy>[0]['proxy'] = { url: 'http://10.0.0.1:3128', pods: null }) =>
  composeNetworkPolicy({
    identity,
    namespace: 'ns',
    name: 'berth-x',
    settings: { egress: 'allowlist', allow: ['a.example'], allowClusterApi: false, allowMetadata: false, brokers: {}, ...settings },
    proxy,
    apiServerAddresses: ['10.0.0.1', '10.96.0.1'],
    createNonce: 'n'.repeat(64),
    installationId: 'inst',
  });

describe('a session NetworkPolicy', () => {
  it('selects the session Pod only, denies ingress, and lets an allowlist out to DNS and the proxy only', () => {
    const p = base({});
    expect(p.metadata?.labels?.['berth.dev/session-id']).toBe('sess-1');
    expect(p.metadata?.annotations).toEqual({ 'berth.dev/create-nonce': 'n'.repeat(64), 'berth.dev/installation': 'inst' });
    expect(p.spec?.podSelector).toEqual({ matchLabels: { 'app.kubernetes.io/managed-by': 'berth', 'berth.dev/instance-id': 'inst-1' } });
    expect(p.spec?.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(p.spec?.ingress).toEqual([]);
    expect(p.spec?.egress).toEqual([
      { to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }], ports: [{ protocol: 'UDP', port: 53 }, { protocol: 'TCP', port: 53 }] },
      { to: [{ ipBlock: { cidr: '10.0.0.1/32' } }], ports: [{ protocol: 'TCP', port: 3128 }] },
    ]);
  });

  it('deny without brokers reaches DNS only; with a broker, the proxy too (by its Pods when it runs in the cluster)', () => {
    expect(base({ egress: 'deny', allow: [] }).spec?.egress).toHaveLength(1);
    const brokered = base({ egress: 'deny', allow: [], brokers: { anthropic: 'K' } }, { url: 'http://egress.berth.svc:3128', pods: { namespace: 'berth', labels: { app: 'egress' } } });
    expect(brokered.spec?.egress?.[1]).toEqual({
      to: [{ podSelector: { matchLabels: { app: 'egress' } }, namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'berth' } } }],
      ports: [{ protocol: 'TCP', port: 3128 }],
    });
  });

  it('open allows everything but link-local (metadata) and the API server, unless told otherwise', () => {
    const open = base({ egress: 'open', allow: [] }).spec?.egress ?? [];
    expect(open).toHaveLength(2);
    expect(open[1]).toEqual({
      to: [{ ipBlock: { cidr: '0.0.0.0/0', except: ['169.254.0.0/16', '10.0.0.1/32', '10.96.0.1/32'] } }, { ipBlock: { cidr: '::/0', except: ['fe80::/10', 'fd00:ec2::254/128'] } }],
    });
    const all = base({ egress: 'open', allow: [], allowClusterApi: true, allowMetadata: true }).spec?.egress?.[1];
    expect(all).toEqual({ to: [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }] });
  });

  it('refuses settings that need a proxy when there is none', () => {
    expect(() => base({}, null)).toThrow(/egress_proxy/);
  });
});
