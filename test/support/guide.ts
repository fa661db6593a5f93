// The guide (openapi/guide/overview.md) as the tests read it: its sections and their fenced code blocks,
// run or written out verbatim.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './packages.js';

export interface CodeBlock {
  lang: string;
  code: string;
}

export const guide = readFileSync(join(ROOT, 'openapi/guide/overview.md'), 'utf8');

/** The text under a heading (`# Title` or `## Title`), up to the next heading of the same or a higher level. */
export function guideSection(heading: string): string {
  const level = /^#+/.exec(heading)![0].length;
  const start = guide.indexOf(`\n${heading}\n`);
  if (start < 0) throw new Error(`openapi/guide/overview.md has no "${heading}" section`);
  const rest = guide.slice(start + heading.length + 2);
  const next = rest.search(new RegExp(`^#{1,${level}} `, 'm'));
  return next < 0 ? rest : rest.slice(0, next);
}

/** The fenced code blocks of a piece of markdown, in order. */
export function codeBlocks(markdown: string): CodeBlock[] {
  return [...markdown.matchAll(/^```([\w-]*)\n([\s\S]*?)^```$/gm)].map((m) => ({ lang: m[1]!, code: m[2]! }));
}

/** The block of a language in the guide's "Paying out" (openapi/guide/withdrawals.md, the Withdrawals tag's page). */
export function payingOutBlock(lang: string): CodeBlock {
  const page = readFileSync(join(ROOT, 'openapi/guide/withdrawals.md'), 'utf8');
  const block = codeBlocks(page.slice(page.indexOf('## Paying out'))).find((b) => b.lang === lang);
  if (!block) throw new Error(`"Paying out" has no ${lang} block`);
  return block;
}
