import { defineConfig } from 'vitest/config';
import { integrationTests, workerTests } from './test/tiers.js';

// Two tiers (test/tiers.ts): the unit tier (`npm run test:unit`), where no test starts a
// process, and the integration tier. `npm test` runs all three projects below. The workers' tests
// start real worker processes on a real PostgreSQL and must not compete for the cores with the
// rest of the suite (a starved worker misses its lease), so they run last, one file at a time.
const integration = Object.keys(integrationTests);

export default defineConfig({
  resolve: { tsconfigPaths: true },
  test: {
    testTimeout: 20_000,
    projects: [
      { extends: true, test: { name: 'unit', include: ['test/**/*.test.ts'], exclude: integration, isolate: false, setupFiles: ['test/support/unit-tier.ts'], sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'integration', include: integration, exclude: workerTests, sequence: { groupOrder: 0 } } },
      { extends: true, test: { name: 'workers', include: workerTests, fileParallelism: false, hookTimeout: 60_000, sequence: { groupOrder: 1 } } },
    ],
  },
});
