/**
 * Sanitization of text that comes from the cluster (status messages, Events, API errors) before it
 * reaches a stage event, an error or the inventory (spec §2.6): the shared redaction with URLs cut
 * to scheme and host — registry URLs carry repository paths and tokens.
 * @module
 */
import { sanitize } from '../../../shared/sanitize.js';

/** Cluster text made safe to show: URLs reduced to `scheme://host`, tokens and credentials redacted. */
export function sanitizeKubeText(text: string): string {
  return sanitize(text, { urls: 'origin' });
}
