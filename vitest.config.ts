import { defineConfig } from 'vitest/config';

// Two groups, one after the other: the workers' tests start real worker processes on a real
// PostgreSQL and must not compete for the cores with the rest of the suite (a starved worker
// misses its lease), so they run last, one file at a time. The workers example is one of them, and
// so are the HTTP handler's tests beside workers and its kill test.
const workers = ['test/worker/**/*.test.ts', 'test/examples/workers.test.ts', 'test/http/workers.test.ts', 'test/http/kill.test.ts'];

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
