/**
 * The egress proxy: per-session allow lists of host names, enforced on CONNECT (with the TLS SNI
 * checked against the CONNECT host) and plain HTTP, every connection recorded.
 * @module
 */
export { createEgressProxy, type EgressProxy } from './proxy.js';
export { allowMatcher, parseAllowList } from './policy.js';
export type { EgressRecord, EgressSession, ProxyCredential } from './types.js';
