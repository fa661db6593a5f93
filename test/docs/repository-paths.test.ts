// The README, bench/README.md, the client's README and docs/*.md name files, folders, npm scripts and
// `partner-api` commands. Each must exist, so that a reader who follows one finds it: a renamed file or
// a removed script fails here, not in a reader's shell. Backticked paths are read from the repository's
// root; markdown links from the file they are in. The repository must also stand alone: nothing may
// point at the design document that once lived beside it, outside the tree.
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/server/cli/commands.js';

const ROOT = resolve(import.meta.dirname, '../..');

const DOCS = [
  'README.md',
  'bench/README.md',
  'src/client/README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** The folders and files at the root that a backticked repository path starts with. */
const TOP = /^(?:(?:\.ci|bench|bin|docs|generated|openapi|scripts|src|test)\/[\w./@{}-]*|(?:README|CHANGELOG)\.md|LICENSE|package\.json|package-lock\.json|redocly\.yaml|tsconfig(?:\.build)?\.json|vitest\.config\.ts)(?:#[\w-]+)?$/;

/** A markdown file's text without its fenced code blocks, and the blocks' text alone. */
function split(text: string): { prose: string; code: string } {
  const blocks = [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)];
  return { prose: text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, ''), code: blocks.map((b) => b[1]).join('\n') };
}

/** The text of every inline code span (a span may wrap onto the next line). */
function codeSpans(prose: string): string[] {
  return [...prose.matchAll(/`([^`]+)`/g)].map((m) => m[1]!.replace(/\s*\n\s*/g, ' ').trim());
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .trim()
    .replace(/\s/g, '-');
}

function anchors(file: string): Set<string> {
  const text = split(readFileSync(file, 'utf8')).prose;
  return new Set([...text.matchAll(/^#{1,6}\s+(.+)$/gm)].map((m) => slug(m[1]!)));
}

/** Why a path (with an optional #anchor) does not resolve, or undefined when it does. */
function problem(path: string, from: string): string | undefined {
  const [file, anchor] = path.split('#') as [string, string | undefined];
  const full = resolve(from, file);
  if (relative(ROOT, full).startsWith('..')) return 'outside the repository';
  if (!existsSync(full)) return 'no such file or folder';
  if (file.endsWith('/') && !statSync(full).isDirectory()) return 'not a folder';
  if (anchor !== undefined && file.endsWith('.md') && !anchors(full).has(anchor)) return `no heading #${anchor}`;
  return undefined;
}

/** Every repository path a document names: `backticked` ones from the root, [links](…) from the document. */
function namedPaths(doc: string): { path: string; from: string }[] {
  const { prose } = split(readFileSync(join(ROOT, doc), 'utf8'));
  const backticked = codeSpans(prose)
    .filter((span) => TOP.test(span) && !/[<*…]/.test(span))
    .map((path) => ({ path, from: ROOT }));
  const linked = [...prose.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z][\w+.-]*:/i.test(target) && !target.startsWith('#'))
    .map((path) => ({ path, from: dirname(join(ROOT, doc)) }));
  return [...backticked, ...linked];
}

const scripts = Object.keys((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);

/** Every npm script a document runs: `npm run X`, `npm test`, `npm start`. */
function namedScripts(doc: string): string[] {
  const text = readFileSync(join(ROOT, doc), 'utf8');
  return [...text.matchAll(/\bnpm (?:run ([\w:-]+)|(test|start)\b)/g)].map((m) => (m[1] ?? m[2])!);
}

/** Every `partner-api …` command line a document shows, in code spans and code blocks, as its words. */
function namedCommands(doc: string): string[][] {
  const { prose, code } = split(readFileSync(join(ROOT, doc), 'utf8'));
  const lines = [...codeSpans(prose), ...code.split('\n')].map((line) => line.trim());
  // A command line starts with the command (a shell prompt or npx before it at most); prose that
  // mentions "the partner-api command" in a code block is not one.
  return lines.flatMap((line) => {
    const match = /^(?:\$\s+)?(?:npx\s+)?partner-api(?:\s+([^#|]*))?$/.exec(line);
    return match ? [(match[1] ?? '').trim().split(/\s+/).filter(Boolean)] : [];
  });
}

const GLOBAL_FLAGS = new Set(['--help', '-h', '--version']);
const groups = new Set(COMMANDS.map((c) => c.words[0]!));

/** Why a command line names no command of src/server/cli/commands.ts, or undefined when it does. */
function commandProblem(words: string[]): string | undefined {
  const rest = words[0] === 'help' ? words.slice(1) : words;
  const [first, second] = rest;
  if (first === undefined || GLOBAL_FLAGS.has(first) || first === '…') return undefined;
  if (!groups.has(first)) return `no command ${first}`;
  const single = COMMANDS.some((c) => c.words.length === 1 && c.words[0] === first);
  if (single || second === undefined || second.startsWith('-') || second === '…') return undefined;
  return COMMANDS.some((c) => c.words[0] === first && c.words[1] === second) ? undefined : `no command ${first} ${second}`;
}

describe('what the README and the docs name exists', () => {
  it('reads the README, bench/README.md, the client README and each file of docs/', () => {
    expect(DOCS).toEqual(expect.arrayContaining(['README.md', 'docs/design.md', 'docs/operating.md']));
    for (const doc of DOCS) expect(existsSync(join(ROOT, doc)), doc).toBe(true);
  });

  it.each(DOCS)('every repository path and link in %s exists', (doc) => {
    const named = namedPaths(doc);
    const missing = named.flatMap(({ path, from }) => {
      const why = problem(path, from);
      return why ? [`${path}: ${why}`] : [];
    });
    expect(missing).toEqual([]);
  });

  it.each(DOCS)('every npm script %s runs is in package.json', (doc) => {
    expect(namedScripts(doc).filter((name) => !scripts.includes(name))).toEqual([]);
  });

  it.each(DOCS)('every partner-api command %s shows is a command of the CLI', (doc) => {
    expect(namedCommands(doc).flatMap((words) => commandProblem(words) ?? [])).toEqual([]);
  });

  it('finds what it checks: paths, links, scripts and commands (a check that finds nothing proves nothing)', () => {
    const all = DOCS.flatMap(namedPaths).map((p) => p.path);
    expect(all).toEqual(expect.arrayContaining(['src/server/cli/commands.ts', 'docs/operating.md', 'bench/README.md', 'test/server/layout.test.ts']));
    expect(DOCS.flatMap(namedScripts)).toEqual(expect.arrayContaining(['test', 'start', 'bench:chain', 'generate']));
    expect(DOCS.flatMap(namedCommands).map((w) => w.slice(0, 2).join(' '))).toEqual(expect.arrayContaining(['merchants create', 'addresses export', 'callbacks redeliver', 'chain resume']));
  });

  it('fails on what does not exist', () => {
    expect(problem('src/server/no-such-file.ts', ROOT)).toBe('no such file or folder');
    expect(problem(['docs/design.md', 'no-such-heading'].join('#'), ROOT)).toBe('no heading #no-such-heading');
    expect(problem('docs/design.md#callbacks', ROOT)).toBeUndefined();
    expect(problem('../elsewhere.md', ROOT)).toBe('outside the repository');
    expect(commandProblem(['merchants', 'delete'])).toBe('no command merchants delete');
    expect(commandProblem(['wallets', 'create'])).toBe('no command wallets');
    expect(commandProblem(['serve', '--workers', '2'])).toBeUndefined();
    expect(commandProblem(['help', 'merchants', 'create'])).toBeUndefined();
  });
});

/** Every text file of the repository, but for what is installed, built or kept by git. */
function repositoryFiles(dir = ROOT): string[] {
  const skip = new Set(['node_modules', '.git', 'dist', 'data', 'test-results', '.tmp', 'ci-reports']);
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (skip.has(entry.name)) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return repositoryFiles(path);
    return entry.isFile() ? [path] : [];
  });
}

describe('the code cites docs that exist', () => {
  it('every docs/<file>.md and #section named in src, test, scripts, bench and openapi exists', () => {
    const cited = ['src', 'test', 'scripts', 'bench', 'openapi'].flatMap((dir) =>
      repositoryFiles(join(ROOT, dir)).flatMap((file) =>
        [...readFileSync(file, 'utf8').matchAll(/(?<![\w/.])docs\/[\w-]+\.md(?:#[\w-]+)?/g)].map((m) => ({ file: relative(ROOT, file), path: m[0] })),
      ),
    );
    expect(cited.length).toBeGreaterThan(10);
    expect(cited.flatMap(({ file, path }) => {
      const why = problem(path, ROOT);
      return why ? [`${file}: ${path}: ${why}`] : [];
    })).toEqual([]);
  });
});

describe('the repository stands alone', () => {
  // Spelled in parts, so that this file does not name what it looks for.
  const designDocument = ['DESIGN', 'md'].join('.');
  const designSection = ['DESIGN', '§'].join(' ');
  const sharedFolder = new RegExp(['(?:\\.\\./)+', 'shared', '(?:/[^\\s\'"`)]*)?'].join(''), 'g');

  it('no file names the design document outside the tree, or a path that leaves it for a shared folder beside it', () => {
    const found: string[] = [];
    for (const file of repositoryFiles()) {
      const text = readFileSync(file, 'utf8');
      if (text.includes('\0')) continue; // binary
      const name = relative(ROOT, file);
      if (text.includes(designDocument) || text.includes(designSection)) found.push(`${name}: names the old design document`);
      // The server's own src/server/shared/ is reached as a sibling from its folders: that one is a
      // folder of the repository. Any other is a path out of the tree, or to nothing.
      for (const match of text.matchAll(sharedFolder)) {
        const folder = resolve(dirname(file), match[0].slice(0, match[0].indexOf('shared') + 'shared'.length));
        if (relative(ROOT, folder).startsWith('..') || !existsSync(folder)) found.push(`${name}: ${match[0]}`);
      }
    }
    expect(found).toEqual([]);
  });
});
