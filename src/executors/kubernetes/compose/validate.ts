/**
 * Kubernetes name and label-value syntax as composition needs it, checked before any object is
 * composed so a bad value is reported with its field path instead of as an API server rejection.
 * The rules themselves live once, in `config/identifiers.ts`.
 * @module
 */
import { isDns1123Label, isDns1123Subdomain, isLabelValue as isKubernetesLabelValue } from '../config/index.js';
import { ComposeFieldError } from './errors.js';


/** A non-empty label value (Kubernetes also allows an empty one; Berth's identity values never are). */
export function isLabelValue(value: string): boolean {
  return value.length > 0 && isKubernetesLabelValue(value);
}

export function requireDns1123Label(path: string, value: string): void {
  if (!isDns1123Label(value)) throw new ComposeFieldError(path, 'must be a DNS-1123 label (lower-case alphanumerics and "-", at most 63 characters)');
}

export function requireDns1123Subdomain(path: string, value: string): void {
  if (!isDns1123Subdomain(value)) throw new ComposeFieldError(path, 'must be a DNS-1123 subdomain (lower-case alphanumerics, "-" and ".", at most 253 characters)');
}
