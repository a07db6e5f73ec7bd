/** What `berth version` reports, shared by the command and the front door (front.ts). @module */
import { VERSION } from '../shared/version.js';

interface VersionInfo {
  version: string;
  node: string;
  platform: string;
}

export function versionInfo(): VersionInfo {
  return { version: VERSION, node: process.version, platform: `${process.platform}/${process.arch}` };
}

export function versionLine(info: VersionInfo = versionInfo()): string {
  return `berth ${info.version} (node ${info.node}, ${info.platform})\n`;
}
