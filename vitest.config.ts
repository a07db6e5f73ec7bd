import { defineConfig } from 'vitest/config';

// Four projects, one per cost class:
//  - unit: pure logic beside the code (src/**/*.test.ts, scripts/*.test.mjs), no processes, no network;
//  - integration: real child processes (the built agentctl bundle, the berth controller) on loopback;
//  - browser: the dashboard in Debian's Chromium (headless, playwright-core) against a real berth serve;
//  - k8s: the real test cluster under test/cluster (scripts/test.sh brings it up and down).
// The full suite (scripts/test.sh, so CI) runs a failing integration, browser or Kubernetes test again,
// up to twice (BERTH_TEST_RETRY), and its closing summary names every test that needed it, with the
// first failure's error: a timing flake then costs a rerun, not the run, and is still reported to fix.
// Unit tests are pure logic and get no retry. A single `npx vitest run FILE` retries nothing.
const retry = Number(process.env.BERTH_TEST_RETRY ?? 0);

export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts', 'test/unit/**/*.test.ts', 'web/src/**/*.test.ts', 'bench/**/*.test.ts', 'scripts/**/*.test.mjs'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          retry,
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          // A safety net, not a speed check: the CLI flows run 20-40 s on an idle machine and well
          // over a minute on a loaded CI runner (one timed out at 60 s there).
          testTimeout: 180_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'browser',
          retry,
          include: ['test/browser/**/*.test.ts'],
          environment: 'node',
          testTimeout: 90_000,
          hookTimeout: 90_000,
        },
      },
      {
        test: {
          name: 'k8s',
          retry,
          include: ['test/k8s/**/*.test.ts'],
          environment: 'node',
          testTimeout: 180_000,
          hookTimeout: 180_000,
          // Each file works in its own namespace: files run side by side (the cluster is mostly
          // waiting on the kubelet), which keeps the suite's wall time well inside CI's budget.
          fileParallelism: true,
        },
      },
      {
        test: {
          // After the parallel files (scripts/test.sh): these change the cluster for everyone
          // (e.g. turn the NetworkPolicy enforcer off), so nothing else may run beside them.
          name: 'k8s-serial',
          retry,
          include: ['test/k8s-serial/**/*.test.ts'],
          environment: 'node',
          testTimeout: 300_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
