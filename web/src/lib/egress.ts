/** Display helpers for a session's egress records (pure). @module */
import type { EgressRecordView, EgressSummaryView } from '../../../src/api/index.js';

const n = (x: number): string => x.toLocaleString('en-US');

/** Bytes in SI units: `512 B`, `20 kB`, `3.1 MB`. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${unit === 0 || value >= 10 ? String(Math.round(value)) : value.toFixed(1)} ${units[unit]}`;
}

/** `12 connections (2 denied) · 3.1 MB down / 20 kB up · broker: 4 requests, 1,234 in / 567 out tokens`. */
export function egressSummaryLabel(s: EgressSummaryView): string {
  const parts = [`${n(s.connections)} connection${s.connections === 1 ? '' : 's'}${s.denied > 0 ? ` (${n(s.denied)} denied)` : ''}`, `${formatBytes(s.bytesDown)} down / ${formatBytes(s.bytesUp)} up`];
  if (s.brokerRequests > 0) parts.push(`broker: ${n(s.brokerRequests)} request${s.brokerRequests === 1 ? '' : 's'}, ${n(s.inputTokens)} in / ${n(s.outputTokens)} out tokens`);
  return parts.join(' · ');
}

/** `allowed`, `denied: host not in the allow list`: what happened to one connection. */
export function egressVerdict(r: EgressRecordView): string {
  const word = r.allowed ? 'allowed' : 'denied';
  return r.reason ? `${word}: ${r.reason}` : word;
}

/** `anthropic · 1,234 in / 567 out` for a brokered request, '' otherwise. */
export function brokerLabel(r: EgressRecordView): string {
  if (r.broker === null) return '';
  return r.inputTokens === null && r.outputTokens === null ? r.broker : `${r.broker} · ${n(r.inputTokens ?? 0)} in / ${n(r.outputTokens ?? 0)} out`;
}
