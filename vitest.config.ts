import { defineConfig } from 'vitest/config';
import { LongestFirstSequencer } from './test/support/sequencer.js';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Database templates for the whole run (test/support/database-templates.ts).
    globalSetup: ['test/support/global-setup.ts'],
    // Vitest's default on 2 cores is one file at a time; many files here spend most of their time
    // waiting on processes, chains and timers, so five at once keep both cores busy (four left about
    // a sixth of them idle: npm test 288 s with four, 275 s with five).
    maxWorkers: 5,
    // The files of a worker share the modules they import (the platform's, loaded once per worker, not
    // once per file): about a tenth less CPU. Each file still builds its own platforms and state (a
    // migrated PGlite it closed is emptied back to the template before the next file gets it).
    isolate: false,
    sequence: { sequencer: LongestFirstSequencer },
    // Generous: with five files at once on two cores, a test that starts several processes runs slower.
    testTimeout: 90_000,
    hookTimeout: 180_000,
    // The JSON report is what .ci/run counts.
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
