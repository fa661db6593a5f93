// The `partner-api` command in tests, two ways. runCommand: in the test's own process through runCli
// (src/server/cli.ts), which the shipped bin runs with the process's argv, environment and output; a
// command then costs a database opening, not a process start (about 2.4 CPU-s). runProcess: the shipped
// command as a process of its own, where the process is what is tested. test/server/cli/cli.test.ts
// checks that the process prints and exits exactly as runCli does.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { runCli } from '../../src/server/cli.js';
import { partnerApiCommand } from './partner-api.js';

export interface CommandOutcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** A command run in this process, with this process's environment and `env` over it, its output captured. */
export async function runCommand(args: string[], env: Record<string, string> = {}): Promise<CommandOutcome> {
  let stdout = '';
  let stderr = '';
  const output = { stdout: { write: (text: string) => (stdout += text) }, stderr: { write: (text: string) => (stderr += text) } };
  const code = await runCli(args, { env: { ...process.env, ...env }, ...output });
  return { code, stdout, stderr };
}

const execFileAsync = promisify(execFile);

/** The shipped command, a process of its own, with this process's environment and `env` over it. */
export async function runProcess(args: string[], env: Record<string, string> = {}): Promise<CommandOutcome> {
  try {
    const { stdout, stderr } = await execFileAsync(process.execPath, [...partnerApiCommand(), ...args], { env: { ...process.env, ...env } });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const e = error as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/**
 * What a process loads: NODE_OPTIONS for it (and the processes it forks) that register a module hook
 * writing the URL of every module they load to a file in `dir` (written at once: the hooks' thread's own
 * stderr may not reach its pipe before process.exit), and the URLs written so far.
 */
export function loadedModules(dir: string): { env: { NODE_OPTIONS: string }; loaded: () => string[] } {
  const log = join(dir, 'loaded.txt');
  const hooks = `import { appendFileSync } from 'node:fs'; export async function resolve(s, c, next) { const r = await next(s, c); appendFileSync(${JSON.stringify(log)}, r.url + '\\n'); return r; }`;
  const hook = join(dir, 'hook.mjs');
  writeFileSync(hook, `import { register } from 'node:module';\nregister(${JSON.stringify(`data:text/javascript,${encodeURIComponent(hooks)}`)});\n`);
  return {
    env: { NODE_OPTIONS: `--import=${pathToFileURL(hook).href}` },
    loaded: () => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []),
  };
}
