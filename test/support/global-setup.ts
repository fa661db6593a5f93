// Once per vitest run, before any test file: the database templates every test copies
// (./database-templates.ts) and, when `npm test` asks (PARTNER_TEST_BUILD=1), the build the real-process
// and package tests run, side by side: neither needs the other, and the test files need both.
import { spawn } from 'node:child_process';
import { makeTemplates } from './database-templates.js';
import { buildIsCurrent } from './partner-api.js';

/** The build's three parts, run at once: `npm run build` less its order, which none of them needs. */
const BUILD_STEPS = ['build:server', 'build:client', 'docs'];

/** Runs `npm run <script>`; its output is printed only when it fails, with the failure. */
function npmRun(script: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', script, '--silent'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('error', reject);
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`npm run ${script} failed (exit ${code}):\n${output}`))));
  });
}

export default async function setup(): Promise<() => Promise<void>> {
  const build = process.env.PARTNER_TEST_BUILD === '1' ? BUILD_STEPS.map(npmRun) : [];
  const [templates, ...built] = await Promise.allSettled([makeTemplates(process.env.TEST_DATABASE_URL), ...build]);
  const failed = [templates, ...built].flatMap((step) => (step.status === 'rejected' ? [step.reason as Error] : []));
  if (templates.status === 'rejected' || failed.length > 0) {
    if (templates.status === 'fulfilled') await templates.value(); // the build failed: the templates go
    throw new Error(failed.map((error) => error.message).join('\n'));
  }
  if (!buildIsCurrent()) {
    console.warn('dist/server is older than src/: the partner-api processes run from the sources through tsx (slower; npm run build:server makes them run the build).');
  }
  return templates.value;
}
