#!/usr/bin/env node
// Builds only what changed since the last build (npm start runs it for the platform and the docs; npm
// test's global setup for those and the client package): each step's inputs are hashed and compared
// with the stamp in dist/.stamps/ its last successful run left (that hash and its output's time); a step
// whose inputs and output are the stamped ones is skipped, and the others run side by side. Plain JavaScript so that it
// costs no TypeScript loader. Run as a script (npm start), it says on stderr which step it builds as the
// step starts and how long it took when it ends, so a first start (about 36 s) is not silence; a step's
// own output (Redocly's banners, tsc) is shown only when the step fails, and the platform's banner follows.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The client package (dist/client), which the tests of the package install and the docs carry packed. */
export const CLIENT_STEP = {
  name: 'client',
  what: 'the client package (dist/client)',
  inputs: ['src/client', 'src/signing', 'generated', 'scripts/build-client.ts', 'tsconfig.json', 'LICENSE', 'package.json', 'package-lock.json'],
  output: 'dist/client/package.json',
  command: ['npm', 'run', 'build:client', '--silent'],
};

/**
 * The steps `npm start` needs: the platform, the client package and the docs site, which carries the
 * client packed (dist/docs/partner-api-client.tgz, served at /partner-api-client.tgz): the docs step runs
 * after the client's (`after`), and its inputs include the client's.
 */
export const STEPS = [
  {
    name: 'server',
    what: 'the platform (dist/server)',
    inputs: ['src/server', 'src/signing', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json'],
    output: 'dist/server/cli.js',
    command: ['npm', 'run', 'build:server', '--silent'],
  },
  CLIENT_STEP,
  {
    name: 'docs',
    what: 'the docs site (dist/docs)',
    inputs: [...new Set(['openapi', 'generated/openapi.json', 'redocly.yaml', 'scripts/docs-hash-links.mjs', 'scripts/pack-client.mjs', ...CLIENT_STEP.inputs])],
    output: 'dist/docs/index.html',
    command: ['npm', 'run', 'docs', '--silent'],
    after: ['client'],
  },
];

function files(root, path) {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [full];
  return readdirSync(full, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** SHA-256 over each input file's path and bytes, in a stable order. */
export function inputsHash(root, inputs) {
  const hash = createHash('sha256');
  for (const file of inputs.flatMap((path) => files(root, path)).sort()) {
    hash.update(relative(root, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

/**
 * The stamp of a step's build: its inputs' hash and when its output was written. A build by other means
 * (npm run build, an interrupted one) rewrites the output, so its stamp no longer matches.
 */
function stampOf(root, step, hash) {
  return `${hash} ${statSync(join(root, step.output)).mtimeMs}`;
}

/** Whether the step's output is its build of the inputs as they are now. */
export function isCurrent(root, step, stampDir = join(root, 'dist', '.stamps')) {
  const stamp = join(stampDir, step.name);
  if (!existsSync(join(root, step.output)) || !existsSync(stamp)) return false;
  return readFileSync(stamp, 'utf8') === stampOf(root, step, inputsHash(root, step.inputs));
}

/** Runs a step's command; its output is kept for the error when it fails. */
function runStep(root, step) {
  return new Promise((resolve, reject) => {
    const [command, ...args] = step.command;
    const child = spawn(command, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.once('error', (error) => reject(new Error(`the ${step.name} build failed (${step.command.join(' ')}): ${error.message}`)));
    child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`the ${step.name} build failed (${step.command.join(' ')}):\n${output}`))));
  });
}

/** What npm start prints of a build: a line as a step starts, and one with its time as it ends. */
export function stepLines(write) {
  return {
    started: (step) => write(`building ${step.what ?? step.name}...\n`),
    finished: (step, seconds) => write(`built ${step.what ?? step.name} in ${seconds.toFixed(1)} s\n`),
  };
}

/**
 * Runs the steps whose inputs changed, side by side, a step with `after` once those steps (if stale) are
 * built; the names of those it ran. Fails with every failure. `report` hears of each step as it starts
 * and as it is built (stepLines).
 */
export async function buildChanged(root, steps, stampDir = join(root, 'dist', '.stamps'), report = undefined) {
  const stale = steps.filter((step) => !isCurrent(root, step, stampDir));
  const running = new Map();
  const start = (step) => {
    if (!running.has(step.name)) {
      const before = stale.filter((other) => step.after?.includes(other.name)).map(start);
      running.set(
        step.name,
        (async () => {
          const awaited = await Promise.allSettled(before);
          if (awaited.some((result) => result.status === 'rejected')) throw new Error(`the ${step.name} build did not run: ${step.after.join(', ')} failed`);
          const hash = inputsHash(root, step.inputs); // the inputs the build reads
          const began = performance.now();
          report?.started(step);
          await runStep(root, step);
          report?.finished(step, (performance.now() - began) / 1000);
          mkdirSync(stampDir, { recursive: true });
          writeFileSync(join(stampDir, step.name), stampOf(root, step, hash));
        })(),
      );
    }
    return running.get(step.name);
  };
  stale.forEach(start);
  const results = await Promise.allSettled(running.values());
  const failures = results.flatMap((result) => (result.status === 'rejected' ? [result.reason.message] : []));
  if (failures.length > 0) throw new Error(failures.join('\n'));
  return stale.map((step) => step.name);
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    await buildChanged(process.cwd(), STEPS, undefined, stepLines((line) => process.stderr.write(line)));
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
