// The packages as users get them: tarballs made by `npm pack` from what `npm run build` wrote, installed
// through npm into empty projects. `npm test` builds first; run `npm run build` before running these alone.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';

export const ROOT = resolve(import.meta.dirname, '../..');

const execFileAsync = promisify(execFile);

export interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a command to its end; never throws for a non-zero exit (the caller asserts on `code`). */
export async function run(command: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<Ran> {
  try {
    const { stdout, stderr } = await execFileAsync(command, args, {
      cwd: options.cwd ?? ROOT,
      env: options.env ?? plainEnv(),
      maxBuffer: 32 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code?: number | string; stdout?: string; stderr?: string };
    return { code: typeof failed.code === 'number' ? failed.code : 1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? String(error) };
  }
}

/** The environment of a user's shell: no loader or test-runner variables of ours leak into it. */
export function plainEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (/^(NODE_OPTIONS|VITEST|TEST|npm_)/i.test(key)) continue;
    env[key] = value;
  }
  return { ...env, ...extra };
}

/** The node binary of this run (Node 20 or Node 24 in CI), and npm run by it. */
export const NODE = process.execPath;

export async function npm(args: string[], cwd: string): Promise<Ran> {
  const ran = await run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd });
  if (ran.code !== 0) throw new Error(`npm ${args.join(' ')} failed in ${cwd}:\n${ran.stderr}\n${ran.stdout}`);
  return ran;
}

/** `npm pack DIR` into a fresh directory, without running scripts (the build is done); the tarball's path. */
export async function pack(directory: string): Promise<string> {
  if (!existsSync(join(directory, 'package.json'))) throw new Error(`${directory} has no package.json: run npm run build`);
  const destination = mkdtempSync(join(tmpdir(), 'partner-pack-'));
  await npm(['pack', directory, '--ignore-scripts', '--pack-destination', destination], ROOT);
  const [tarball] = readdirSync(destination).filter((name) => name.endsWith('.tgz'));
  if (!tarball) throw new Error(`npm pack ${directory} wrote no tarball`);
  return join(destination, tarball);
}

/** The files inside a tarball, without the leading `package/`. */
export async function tarballFiles(tarball: string): Promise<string[]> {
  const { stdout } = await run('tar', ['-tzf', tarball]);
  return stdout.split('\n').filter(Boolean).map((line) => line.replace(/^package\//, ''));
}

/** An empty project (its own package.json) with the tarball installed from npm. */
export async function installInEmptyProject(tarball: string, options: { type: 'module' | 'commonjs'; omitDev?: boolean }): Promise<string> {
  const project = mkdtempSync(join(tmpdir(), 'partner-consumer-'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true, type: options.type }, null, 2));
  await npm(['install', tarball, '--prefer-offline', ...(options.omitDev ? ['--omit=dev'] : [])], project);
  return project;
}

/** Every package directory under node_modules (scoped ones as `@scope/name`), nested ones included. */
export function installedPackages(nodeModules: string): string[] {
  if (!existsSync(nodeModules)) return [];
  const found: string[] = [];
  for (const entry of readdirSync(nodeModules)) {
    if (entry.startsWith('.')) continue;
    const names = entry.startsWith('@') ? readdirSync(join(nodeModules, entry)).map((n) => `${entry}/${n}`) : [entry];
    for (const name of names) {
      found.push(name);
      found.push(...installedPackages(join(nodeModules, name, 'node_modules')));
    }
  }
  return found;
}

/** Removes the temporary directories a test made (any of them may be undefined when its setup failed). */
export function removeAll(...directories: (string | undefined)[]) {
  for (const directory of directories) if (directory) rmSync(directory, { recursive: true, force: true });
}
