// The README's "Words used here" in the code: a word the table gives one meaning has it in src/server
// too, so that a reader who looks a name up finds what the table says.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/server/cli/commands.js';
import { NETWORK_VALUE } from '../../src/server/cli/flags.js';

const ROOT = resolve(import.meta.dirname, '../..');
const SERVER = resolve(ROOT, 'src/server');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') ? [path] : [];
  });
}

/** Each file under src/server as its path and its code without comments. */
const files = sourceFiles(SERVER).map((file) => ({
  path: relative(SERVER, file),
  code: readFileSync(file, 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/(^|[^:'"`])\/\/.*$/gm, '$1'),
}));

/** Where a pattern stands in the code, outside its quoted strings, as `path: the line`. */
function uses(pattern: RegExp, where: (path: string) => boolean = () => true): string[] {
  return files
    .filter((f) => where(f.path))
    .flatMap((f) => f.code.split('\n').filter((line) => pattern.test(line.replace(/'(?:[^'\\]|\\.)*'/g, "''"))).map((line) => `${f.path}: ${line.trim()}`));
}

describe('the words of the README in the code', () => {
  it("names a withdrawal's address paid to `destinationAddress` (`destination_address` in rows), leaving `destination` to callbacks", () => {
    expect(uses(/\btoAddress\b/)).toEqual([]);
    expect(uses(/\.destination\b|\bdestination\s*[:?]\s/, (path) => !path.startsWith('callbacks/'))).toEqual([]);
  });

  it("names an order's network `blockchain`, as the contract and the column do, in the rows it inserts too", () => {
    expect(uses(/^\s*network: Network;/, (path) => path === 'orders/orders.ts' || path === 'orders/order-rows.ts')).toEqual([]);
  });

  it('names the delivery types as the contract does (DeliveryState, EventDelivery, DeliveryAttempt)', () => {
    expect(uses(/\b(?:CallbackState|CALLBACK_STATES|DeliverySummary|deliverySummary)\b/)).toEqual([]);
  });

  it('imports `Network` from shared/network.ts, where it is declared', () => {
    expect(uses(/\bNetwork\b.*from '[./]*(?:addresses\/)?derivation\.js'/)).toEqual([]);
  });

  it("says cursor only of the API's page token in the read side (a scan's place is its position)", () => {
    // Comments included: they are where the word was used of the chain.
    const readSide = sourceFiles(SERVER).filter((file) => ['orders/', 'callbacks/', 'db/pages.ts', 'http/', 'withdrawals/'].some((prefix) => relative(SERVER, file).startsWith(prefix)));
    const lines = readSide.flatMap((file) => readFileSync(file, 'utf8').split('\n').map((line) => `${relative(SERVER, file)}: ${line.trim()}`));
    expect(lines.filter((line) => /scan cursor|cursors? of the chain|chain's cursor|network's cursor/i.test(line))).toEqual([]);
  });
});

/** Each file under src/server as it is, comments and strings included: log lines and messages are words too. */
const texts = sourceFiles(SERVER).map((file) => ({ path: relative(SERVER, file), text: readFileSync(file, 'utf8') }));

/** The lines of src/server, as `path: the line`, in the folders or files given, that match a pattern. */
function lines(pattern: RegExp, places: string[], unless: (line: string) => string = (line) => line): string[] {
  return texts
    .filter((f) => places.some((place) => f.path === place || f.path.startsWith(`${place}/`)))
    .flatMap((f) => f.text.split('\n').filter((line) => pattern.test(unless(line))).map((line) => `${f.path}: ${line.trim()}`));
}

/** The docs operators and contributors read, by name. */
const DOCS = ['README.md', 'bench/README.md', 'src/client/README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];
const doc = (name: string) => readFileSync(join(ROOT, name), 'utf8');

/** The lines of the docs that match a pattern, as `file: the line`. */
function docLines(pattern: RegExp, unless: (line: string) => string = (line) => line): string[] {
  return DOCS.flatMap((name) => doc(name).split('\n').filter((line) => pattern.test(unless(line))).map((line) => `${name}: ${line.trim()}`));
}

/** A section of a Markdown file, from its `## ` heading to the next. */
function section(name: string, heading: string): string {
  const text = doc(name);
  const start = text.indexOf(`\n## ${heading}\n`);
  expect(start, `${name} has a section "${heading}"`).toBeGreaterThan(-1);
  const end = text.indexOf('\n## ', start + 1);
  return text.slice(start, end === -1 ? undefined : end);
}

// Issue 48, item 5: one word, one meaning, in the code, the commands' flags, the metrics and the docs.
describe('one word, one meaning (issue 48)', () => {
  it('has a row in the README for each word given one meaning', () => {
    const rows = doc('README.md').split('\n').filter((line) => line.startsWith('| '));
    for (const word of ['cursor', 'scan position', 'page', 'lease', 'claim', 'network']) expect(rows.some((row) => row.startsWith(`| ${word} |`)), word).toBe(true);
  });

  it('calls where a chain scanner goes on its scan position, never a cursor (the API\'s page token): chain_cursors keeps its name', () => {
    const withoutTable = (line: string) => line.replace(/chain_cursors/g, '');
    expect(lines(/cursor/i, ['chain', 'jobs'], withoutTable)).toEqual([]);
    expect(section('docs/operating.md', 'Chain halts and rescans').replace(/chain_cursors/g, '')).not.toMatch(/cursor/i);
  });

  it("names a command's network --blockchain, as the contract does; --network is only read, never documented", () => {
    for (const command of COMMANDS) {
      const networkFlags = Object.entries(command.flags).filter(([, spec]) => spec.value === NETWORK_VALUE).map(([flag]) => flag);
      expect(networkFlags.every((flag) => flag === 'blockchain'), command.words.join(' ')).toBe(true);
      expect(command.example).not.toMatch(/--network\b/);
    }
    // In the code, strings included (its messages name commands); its comments may say what the old spelling was.
    expect(files.flatMap((f) => f.code.split('\n').filter((line) => /--network\b/.test(line)).map((line) => `${f.path}: ${line.trim()}`))).toEqual([]);
    expect(docLines(/--network\b/)).toEqual([]);
  });

  it('says lease and holder, never leader, but in the old metric name partner_job_leader kept for dashboards', () => {
    const withoutOldMetric = (line: string) => line.replace(/partner_job_leader/g, '');
    expect(lines(/leader/i, ['chain', 'jobs', 'process', 'cli', 'cli.ts', 'platform.ts'], withoutOldMetric)).toEqual([]);
    expect(docLines(/leader/i, withoutOldMetric)).toEqual([]);
  });

  it("leaves \"claim\" to the dispatcher's taking of callbacks and the operator's claim of a withdrawal: a job's lease is taken, never claimed", () => {
    const aboutCallbacks = (line: string) => (/callback|outbox|dispatcher/i.test(line) ? '' : line);
    // The withdrawal commands' claim (withdrawals claim, unclaim) is the operator's, of a withdrawal (README, its row).
    const outsideWithdrawals = (line: string) => !line.startsWith('cli/withdrawal-commands.ts: ');
    expect(lines(/claim/i, ['chain', 'jobs', 'process', 'cli', 'cli.ts', 'platform.ts'], aboutCallbacks).filter(outsideWithdrawals)).toEqual([]);
    expect(section('docs/operating.md', 'PostgreSQL and several instances')).not.toMatch(/claim/i);
  });

  it("calls the page a payer opens the payment page: a page alone is a list's", () => {
    const named = (line: string) => line.replace(/payment[ -]pages?\b|page token/gi, '');
    expect(lines(/\bpages?\b/i, ['chain', 'jobs', 'process', 'cli', 'cli.ts'], named)).toEqual([]);
    expect(docLines(/payer'?s'? (hosted )?page/i)).toEqual([]);
    expect(section('docs/operating.md', 'The sandbox: `npm start`').replace(/payment pages?/gi, '')).not.toMatch(/\bpages?\b/i);
  });
});
