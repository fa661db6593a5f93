#!/usr/bin/env node
// Builds only what changed since the last build (npm start runs it): each step's inputs are hashed and
// compared with the hash stamped in dist/.stamps/ when the step last succeeded; a step whose inputs are
// the same and whose output exists is skipped. Plain JavaScript so that it costs no TypeScript loader.
// A step's own output (Redocly's banners, tsc) is shown only when the step fails, so `npm start`
// prints the platform's banner first.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/** The steps `npm start` needs: the platform and the docs site (the client package is not served). */
export const STEPS = [
  {
    name: 'server',
    inputs: ['src/server', 'src/signing', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json'],
    output: 'dist/server/cli.js',
    command: ['npm', 'run', 'build:server', '--silent'],
  },
  {
    name: 'docs',
    inputs: ['openapi', 'generated/openapi.json', 'redocly.yaml', 'package-lock.json'],
    output: 'dist/docs/index.html',
    command: ['npm', 'run', 'docs', '--silent'],
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

/** Runs the steps whose inputs changed; returns the names of those it ran. Throws when one fails. */
export function buildChanged(root, steps, stampDir = join(root, 'dist', '.stamps')) {
  const ran = [];
  for (const step of steps) {
    const stamp = join(stampDir, step.name);
    const hash = inputsHash(root, step.inputs);
    if (existsSync(join(root, step.output)) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) continue;
    const [command, ...args] = step.command;
    const result = spawnSync(command, args, { cwd: root, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    if (result.status !== 0) {
      throw new Error(`the ${step.name} build failed (${command} ${args.join(' ')}):\n${result.stdout ?? ''}${result.stderr ?? ''}${result.error ?? ''}`);
    }
    mkdirSync(stampDir, { recursive: true });
    writeFileSync(stamp, hash);
    ran.push(step.name);
  }
  return ran;
}

if (import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    buildChanged(process.cwd(), STEPS);
  } catch (error) {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  }
}
