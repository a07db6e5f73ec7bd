import { defineConfig } from 'vitest/config';

// Three projects, one per cost class:
//  - unit: pure logic beside the code (src/**/*.test.ts), no processes, no network;
//  - integration: real child processes (the built agentctl bundle, the berth controller) on loopback;
//  - k8s: the real test cluster under test/cluster (scripts/test.sh brings it up and down).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['src/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          testTimeout: 60_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: 'k8s',
          include: ['test/k8s/**/*.test.ts'],
          environment: 'node',
          testTimeout: 180_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
