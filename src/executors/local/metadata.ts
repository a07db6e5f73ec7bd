/**
 * Typed runtime metadata of the local executor and its one encoder/decoder to the inventory's
 * string map (so no caller reads untyped keys).
 * @module
 */
import { META } from './constants.js';

export interface LocalMetadata {
  instanceId: string;
  sessionDir: string;
  workspacePath: string;
  workspaceCreated: boolean;
  launchKind: 'fresh' | 'revive';
  agentctlPath: string;
  agentctlPid: number | null;
  agentctlProcStart: string | null;
  controlPort: number | null;
  instancePort: number | null;
  /** agentctl runs without a network of its own and is reached through its control socket (constants.ts FILES.controlSocket). */
  privateNetwork?: boolean;
}

export function encodeLocalMetadata(m: LocalMetadata, state: string): Record<string, string> {
  const out: Record<string, string> = {
    [META.instanceId]: m.instanceId,
    [META.sessionDir]: m.sessionDir,
    [META.workspacePath]: m.workspacePath,
    [META.workspaceCreated]: String(m.workspaceCreated),
    [META.launchKind]: m.launchKind,
    [META.agentctlPath]: m.agentctlPath,
    [META.state]: state,
  };
  if (m.agentctlPid !== null) out[META.agentctlPid] = String(m.agentctlPid);
  if (m.agentctlProcStart !== null) out[META.agentctlProcStart] = m.agentctlProcStart;
  if (m.controlPort !== null) out[META.controlPort] = String(m.controlPort);
  if (m.instancePort !== null) out[META.instancePort] = String(m.instancePort);
  if (m.privateNetwork) out[META.privateNetwork] = 'true';
  return out;
}

/** Thrown when recorded metadata lacks what the local executor needs. */
export class LocalMetadataError extends Error {
  override readonly name = 'LocalMetadataError';
  constructor(readonly key: string, detail: string) {
    super(`local executor: recorded metadata ${key} ${detail}`);
  }
}

function int(raw: string | undefined, key: string): number | null {
  if (raw === undefined || raw === '') return null;
  if (!/^\d+$/.test(raw)) throw new LocalMetadataError(key, 'must be a positive integer');
  return Number(raw);
}

export function decodeLocalMetadata(raw: Readonly<Record<string, string>>): LocalMetadata {
  const need = (key: string): string => {
    const v = raw[key];
    if (v === undefined || v === '') throw new LocalMetadataError(key, 'is missing');
    return v;
  };
  return {
    instanceId: need(META.instanceId),
    sessionDir: need(META.sessionDir),
    workspacePath: need(META.workspacePath),
    workspaceCreated: raw[META.workspaceCreated] === 'true',
    launchKind: raw[META.launchKind] === 'revive' ? 'revive' : 'fresh',
    agentctlPath: raw[META.agentctlPath] ?? '',
    agentctlPid: int(raw[META.agentctlPid], META.agentctlPid),
    agentctlProcStart: raw[META.agentctlProcStart] ?? null,
    controlPort: int(raw[META.controlPort], META.controlPort),
    instancePort: int(raw[META.instancePort], META.instancePort),
    ...(raw[META.privateNetwork] === 'true' ? { privateNetwork: true } : {}),
  };
}
