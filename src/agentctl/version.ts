/**
 * The agentctl version. The bundle gets it from esbuild's `__BERTH_VERSION__` define (the CJS
 * bundle has no `import.meta.url` to find package.json); from source (tests) it falls back to the
 * shared helper's package.json lookup.
 * @module
 */
import { VERSION as SHARED_VERSION } from '../shared/version.js';

declare const __BERTH_VERSION__: string | undefined;

export const VERSION: string = typeof __BERTH_VERSION__ === 'string' ? __BERTH_VERSION__ : SHARED_VERSION;
