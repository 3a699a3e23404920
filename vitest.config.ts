import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // A real Cassandra for test/integration/archive-cassandra.test.ts, started only when that file runs.
    globalSetup: ['test/harness/cassandra-global-setup.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Integration tests start real processes; two cores cannot run many of them at once.
    pool: 'forks',
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    reporters: ['default'],
  },
});
