/**
 * Vite config of the Berth dashboard. scripts/build.mjs passes `root` (this folder) and the output
 * folder (`dist/web`); JSX goes through Vite's own Oxc transform with Preact's automatic runtime.
 */
import { defineConfig } from 'vite';

export default defineConfig({
  base: '/',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    assetsDir: 'assets',
    target: 'es2022',
    sourcemap: false,
    // One CSS file, no inline module preload polyfill script (the CSP allows no inline scripts).
    modulePreload: { polyfill: false },
    cssCodeSplit: false,
  },
});
