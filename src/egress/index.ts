/**
 * The egress proxy: per-session allow lists of host names, enforced on CONNECT (with the TLS SNI
 * checked against the CONNECT host) and plain HTTP, every connection recorded; internal addresses
 * refused whatever name leads there; a credential broker for model APIs (`/broker/<provider>/…`).
 * @module
 */
export { createEgressProxy, type EgressProxy } from './proxy.js';
export { allowMatcher, parseAllowEntry, parseAllowList } from './policy.js';
export { BROKER_PRESETS } from './broker.js';
export type { BrokerProvider, EgressRecord, EgressSession, ProxyCredential } from './types.js';
