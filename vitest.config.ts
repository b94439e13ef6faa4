import { defineConfig } from 'vitest/config';

// Two groups, one after the other: the workers' tests start real worker processes on a real
// PostgreSQL and must not compete for the cores with the rest of the suite (a starved worker
// misses its lease), so they run last, one file at a time. The workers example and the evaluation
// on the workers are among them.
const workers = ['test/worker/**/*.test.ts', 'test/examples/workers.test.ts', 'test/evals/workers.test.ts'];

export default defineConfig({
  resolve: { tsconfigPaths: true },
  test: {
    testTimeout: 20_000,
    projects: [
      { extends: true, test: { name: 'koagent', include: ['test/**/*.test.ts'], exclude: workers, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'workers', include: workers, fileParallelism: false, hookTimeout: 60_000, sequence: { groupOrder: 1 } } },
    ],
  },
});
