import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // The JSON report is what .ci/run counts.
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
