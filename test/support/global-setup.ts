// Once per vitest run, before any test file: the database templates every test copies
// (./database-templates.ts), and a word on which `partner-api` the real-process tests run.
import { makeTemplates } from './database-templates.js';
import { buildIsCurrent } from './partner-api.js';

export default async function setup(): Promise<() => Promise<void>> {
  if (!buildIsCurrent()) {
    console.warn('dist/server is older than src/: the partner-api processes run from the sources through tsx (slower; npm run build:server makes them run the build).');
  }
  return makeTemplates(process.env.TEST_DATABASE_URL);
}
