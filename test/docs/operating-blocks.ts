// docs/operating.md's shell blocks as the tests run them: verbatim, with bash, `partner-api` being the
// shipped command (test/docs/operating-withdrawals.test.ts, test/server/payouts/hand-payment-instances.test.ts).
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ROOT } from '../support/packages.js';
import { partnerApiCommand } from '../support/partner-api.js';

export const operating = readFileSync(join(ROOT, 'docs/operating.md'), 'utf8');

/** The `sh` blocks of a list item that starts with `- **<title>.**`, de-indented, in order. */
export function recipeBlocks(markdown: string, title: string): string[] {
  const start = markdown.indexOf(`- **${title}.**`);
  if (start < 0) throw new Error(`docs/operating.md has no "${title}" item`);
  const rest = markdown.slice(start + 1);
  const item = rest.slice(0, rest.search(/^- \*\*|^## /m));
  return [...item.matchAll(/^( *)```sh\n([\s\S]*?)^\1```$/gm)].map((m) => m[2]!.replace(new RegExp(`^${m[1]}`, 'gm'), ''));
}

/** Runs a block with bash, `partner-api` the shipped command, in the repository's folder. */
export async function runBlock(code: string, env: Record<string, string>): Promise<string> {
  const command = [process.execPath, ...partnerApiCommand()].map((word) => `'${word}'`).join(' ');
  const script = `partner-api() { ${command} "$@"; }\n${code}`;
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], { cwd: ROOT, env: { ...process.env, ...env }, timeout: 120_000 });
  return stdout;
}

