// Once per vitest run, before any test file: the database templates every test copies
// (./database-templates.ts) and, when `npm test` asks (PARTNER_TEST_BUILD=1), the build the real-process
// and package tests run, side by side: neither needs the other, and the test files need both. The build
// is npm start's: only the steps whose inputs changed since their last build run (scripts/build-changed.mjs).
// @ts-expect-error: a plain JavaScript script, without declarations
import { buildChanged, STEPS } from '../../scripts/build-changed.mjs';
import { makeTemplates } from './database-templates.js';
import { ROOT } from './packages.js';
import { buildIsCurrent } from './partner-api.js';

const build = buildChanged as (root: string, steps: unknown[]) => Promise<string[]>;

export default async function setup(): Promise<() => Promise<void>> {
  const building = process.env.PARTNER_TEST_BUILD === '1' ? [build(ROOT, STEPS)] : [];
  const [templates, ...built] = await Promise.allSettled([makeTemplates(process.env.TEST_DATABASE_URL), ...building]);
  const failed = [templates, ...built].flatMap((step) => (step.status === 'rejected' ? [step.reason as Error] : []));
  if (templates.status === 'rejected' || failed.length > 0) {
    if (templates.status === 'fulfilled') await templates.value(); // the build failed: the templates go
    throw new Error(failed.map((error) => error.message).join('\n'));
  }
  if (!buildIsCurrent()) {
    console.warn('dist/server was not built from src/ as it is now: the partner-api processes run from the sources through tsx (slower; npm test or npm start builds it).');
  }
  return templates.value;
}
