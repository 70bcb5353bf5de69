import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    globalSetup: ['test/global-setup.ts'],
    // Every response a test's app sends is checked against the OpenAPI document the app serves.
    setupFiles: ['test/support/contract-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Each file clones its own database; two workers keep the 2-core machine busy without thrashing.
    maxWorkers: 2,
    reporters: ['default'],
  },
});
