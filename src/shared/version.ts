/**
 * The Berth version, injected by the esbuild bundles (scripts/build.mjs); read from package.json
 * when running from source (tests, tsx).
 * @module
 */
import { readFileSync } from 'node:fs';

declare const __BERTH_VERSION__: string | undefined;

function fromPackageJson(): string {
  try {
    const url = new URL('../../package.json', import.meta.url);
    return (JSON.parse(readFileSync(url, 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0-dev';
  }
}

export const VERSION: string = typeof __BERTH_VERSION__ === 'string' ? __BERTH_VERSION__ : fromPackageJson();
