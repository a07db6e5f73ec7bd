import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/**', 'node_modules/**', 'docs/**', 'test/cluster/**/*.go', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-globals': ['error', 'require', '__dirname', '__filename'],
    },
  },
  {
    // The wire protocol and the typed client are shared with a future browser dashboard: no node:* there.
    files: ['src/protocol/**/*.ts', 'src/agentctl-client/**/*.ts'],
    ignores: ['src/**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['node:*', '../agentctl/*', '../controller/*', '../cli/*', '../inventory/*', '../executors/*'] }],
    },
  },
  {
    // The dashboard runs in the browser: DOM globals, no Node APIs.
    files: ['web/**/*.ts', 'web/**/*.tsx'],
    languageOptions: {
      globals: Object.fromEntries(
        ['window', 'document', 'location', 'history', 'navigator', 'fetch', 'WebSocket', 'TextEncoder', 'TextDecoder', 'AbortController', 'AbortSignal', 'DOMException', 'ResizeObserver', 'HTMLElement', 'MouseEvent', 'Event', 'setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'console', 'URL', 'URLSearchParams'].map((g) => [g, 'readonly']),
      ),
    },
    rules: { 'no-restricted-imports': ['error', { patterns: ['node:*'] }] },
  },
  {
    files: ['src/agentctl/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: ['../controller/*', '../cli/*', '../inventory/*', '../executors/*'] }],
    },
  },
  {
    // Size limits (README: Architecture): a file over 400 lines wants splitting, and a function over 80
    // (blank lines and comments not counted) says why on the line before it:
    // `// eslint-disable-next-line max-lines-per-function -- <reason>`. Tests are exempt (a test file
    // is a list of cases, and one `describe` callback holds them all).
    files: ['src/**/*.ts', 'web/**/*.ts', 'web/**/*.tsx'],
    ignores: ['**/*.test.ts', '**/*.test.tsx'],
    rules: {
      'max-lines': ['error', { max: 400 }],
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', Buffer: 'readonly', setTimeout: 'readonly' } },
    rules: { 'no-restricted-globals': 'off' },
  },
  {
    // bin/ is CommonJS (bin/package.json): the front door starts without the ES module loader.
    files: ['bin/*.js'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', __dirname: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
