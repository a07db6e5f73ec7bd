/**
 * A session's NetworkPolicy (issue 23), composed from its network settings. Pure.
 *
 * It selects exactly the session's Pod (its instance-id label) and
 * - denies all ingress: agentctl is reached through the API server's port-forward, which
 *   NetworkPolicy does not see (the kubelet connects inside the Pod's network namespace);
 * - allows egress to the cluster DNS (Pods labelled `k8s-app: kube-dns`, port 53), and to Berth's
 *   egress proxy when the settings use it (its address, or its Pods by label);
 * - for `open`, also anywhere except link-local addresses (the metadata service) and the API
 *   server's addresses, unless the settings allow them. `deny` and `allowlist` allow nothing else:
 *   whatever the agent reaches by name goes through the proxy, which checks the allow list.
 * @module
 */
import { isIP } from 'node:net';
import type { V1NetworkPolicy, V1NetworkPolicyEgressRule, V1NetworkPolicyPeer } from '@kubernetes/client-node';
import type { EgressProxyTarget, NetworkSettings } from '../../network.js';
import { usesEgressProxy } from '../../network.js';
import { ANNOTATION, LABEL, LABEL_VALUE } from '../constants.js';
import { ownershipLabels, type ResourceIdentity } from './identity.js';

interface PolicyInput {
  identity: ResourceIdentity;
  namespace: string;
  name: string;
  settings: NetworkSettings;
  /** Where the Pods reach the egress proxy; required when the settings use it. */
  proxy: EgressProxyTarget | null;
  /** The API server's addresses (blocked under `open` unless allowed). */
  apiServerAddresses: readonly string[];
  createNonce: string;
  installationId: string | null;
}

/** Link-local ranges: the cloud metadata service (169.254.169.254, fd00:ec2::254 aside) and its kin. */
const LINK_LOCAL_V4 = '169.254.0.0/16';
const LINK_LOCAL_V6 = 'fe80::/10';
const METADATA_V6 = 'fd00:ec2::254/128';

/** The composed policy; throws an Error when the settings need a proxy and none is given. */
export function composeNetworkPolicy(input: PolicyInput): V1NetworkPolicy {
  const { settings } = input;
  const egress: V1NetworkPolicyEgressRule[] = [dnsRule()];
  if (usesEgressProxy(settings)) {
    if (input.proxy === null) throw new Error('the network settings use the egress proxy, but the executor has no egress_proxy');
    egress.push(proxyRule(input.proxy));
  }
  if (settings.egress === 'open') egress.push(...openRules(settings, input.apiServerAddresses));
  const annotations: Record<string, string> = { [ANNOTATION.createNonce]: input.createNonce };
  if (input.installationId !== null) annotations[ANNOTATION.installation] = input.installationId;
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: input.name, namespace: input.namespace, labels: ownershipLabels(input.identity), annotations },
    spec: {
      podSelector: { matchLabels: { [LABEL.managedBy]: LABEL_VALUE.managedBy, [LABEL.instanceId]: input.identity.instanceId } },
      policyTypes: ['Ingress', 'Egress'],
      ingress: [],
      egress,
    },
  };
}

function dnsRule(): V1NetworkPolicyEgressRule {
  return {
    to: [{ namespaceSelector: {}, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } }],
    ports: [
      { protocol: 'UDP', port: 53 },
      { protocol: 'TCP', port: 53 },
    ],
  };
}

function proxyRule(proxy: EgressProxyTarget): V1NetworkPolicyEgressRule {
  const url = new URL(proxy.url);
  const port = Number(url.port);
  let peer: V1NetworkPolicyPeer;
  if (proxy.pods !== null) {
    peer = { podSelector: { matchLabels: { ...proxy.pods.labels } } };
    if (proxy.pods.namespace !== null) peer.namespaceSelector = { matchLabels: { 'kubernetes.io/metadata.name': proxy.pods.namespace } };
  } else {
    const host = url.hostname.replace(/^\[|\]$/g, '');
    peer = { ipBlock: { cidr: hostCidr(host) } };
  }
  return { to: [peer], ports: [{ protocol: 'TCP', port }] };
}

function openRules(settings: NetworkSettings, apiServer: readonly string[]): V1NetworkPolicyEgressRule[] {
  const exceptV4: string[] = [];
  const exceptV6: string[] = [];
  if (!settings.allowMetadata) {
    exceptV4.push(LINK_LOCAL_V4);
    exceptV6.push(LINK_LOCAL_V6, METADATA_V6);
  }
  if (!settings.allowClusterApi) {
    for (const a of new Set(apiServer)) (isIP(a) === 6 ? exceptV6 : exceptV4).push(hostCidr(a));
  }
  const v4: V1NetworkPolicyPeer = { ipBlock: { cidr: '0.0.0.0/0', ...(exceptV4.length > 0 ? { except: exceptV4 } : {}) } };
  const v6: V1NetworkPolicyPeer = { ipBlock: { cidr: '::/0', ...(exceptV6.length > 0 ? { except: exceptV6 } : {}) } };
  return [{ to: [v4, v6] }];
}

function hostCidr(address: string): string {
  const kind = isIP(address);
  if (kind === 0) throw new Error(`${address} is not an IP address`);
  return kind === 6 ? `${address}/128` : `${address}/32`;
}
