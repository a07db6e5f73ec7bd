/**
 * Kubernetes identifier rules (DNS-1123 label and subdomain, label keys and values), as the API
 * server checks them. Shared by config validation and Pod composition so both agree on what a
 * valid name is before anything is sent to the cluster.
 * @module
 */

const LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const SUBDOMAIN_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL_VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const DNS1123_LABEL_MAX = 63;
const DNS1123_SUBDOMAIN_MAX = 253;
const LABEL_VALUE_MAX = 63;

/** A DNS-1123 label: namespaces, container names, port names (`agent`, `team-a`). */
export function isDns1123Label(value: string): boolean {
  return value.length <= DNS1123_LABEL_MAX && LABEL_RE.test(value);
}

/** A DNS-1123 subdomain: object names such as PVCs and storage classes (`fast.ssd-1`). */
export function isDns1123Subdomain(value: string): boolean {
  return value.length <= DNS1123_SUBDOMAIN_MAX && SUBDOMAIN_RE.test(value);
}

/** A label value: empty, or up to 63 alphanumerics with `-`, `_`, `.` inside. */
export function isLabelValue(value: string): boolean {
  return value.length <= LABEL_VALUE_MAX && LABEL_VALUE_RE.test(value);
}

/**
 * A qualified name, the form of label and annotation keys: `name` or `prefix/name`, where the prefix
 * is a DNS-1123 subdomain and the name is a label-value-like string of 1..63 characters.
 */
export function isQualifiedName(value: string): boolean {
  const slash = value.indexOf('/');
  const prefix = slash === -1 ? null : value.slice(0, slash);
  const name = slash === -1 ? value : value.slice(slash + 1);
  if (prefix !== null && (prefix === '' || !isDns1123Subdomain(prefix))) return false;
  return name !== '' && isLabelValue(name);
}
