// The server's tree shows its architecture (README, "Where a new line goes"): only the entry, the wiring and the
// settings at the top, and imports that point down. This reads every import of src/server and fails
// on one that points up, so the rule holds without anyone having to remember it.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SERVER = resolve(import.meta.dirname, '../../src/server');
const ROOT = resolve(SERVER, '../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every relative import of a file, as a path under src/server ('cli/errors.ts', 'platform.ts'). */
function serverImports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specifiers = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+)'/g)].map((m) => m[1]!);
  return specifiers
    .map((specifier) => relative(SERVER, resolve(dirname(file), specifier)).replace(/\.js$/, '.ts'))
    .filter((path) => !path.startsWith('..'));
}

const files = sourceFiles(SERVER).map((file) => ({ path: relative(SERVER, file), imports: serverImports(file) }));

/**
 * The import circles of a graph: its strongly connected components of more than one file (or a file that
 * imports itself), each as its files, by Tarjan's algorithm. Type imports count: a circle of types is
 * still two files that cannot be read one after the other.
 */
function importCircles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string) => {
    index.set(file, next);
    low.set(file, next++);
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file) ?? []) {
      if (!graph.has(target)) continue;
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) low.set(file, Math.min(low.get(file)!, index.get(target)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(member);
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.includes(file)) circles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}
const folder = (path: string) => (path.includes('/') ? path.split('/')[0]! : '');
/** The layers that may be imported only from above them: the CLI, the process wiring, the background jobs and the top. */
const UPPER = new Set(['cli', 'process', 'jobs', '']);
const CAPABILITIES = ['addresses', 'orders', 'withdrawals', 'ledger', 'payouts', 'merchants', 'callbacks', 'chain', 'payment-page'];

describe('the server layout', () => {
  it('knows every folder of src/server as a capability or a layer, so that the rules below cover a new one', () => {
    const layers = [...CAPABILITIES, 'db', 'shared', 'http', 'jobs', 'cli', 'process', 'config'];
    const folders = [...new Set(files.map((f) => folder(f.path)).filter((name) => name !== ''))];
    expect(folders.filter((name) => !layers.includes(name))).toEqual([]);
  });

  it('keeps at most four files at the top of src/server', () => {
    const top = files.filter((f) => folder(f.path) === '').map((f) => f.path);
    expect(top.length).toBeLessThanOrEqual(4);
    expect(top).toEqual(expect.arrayContaining(['cli.ts', 'platform.ts', 'config.ts']));
  });

  it('has no import from a capability folder, db/, shared/ or http/ up into the CLI, the process wiring, the jobs or the top (config.ts aside)', () => {
    const upward = files
      .filter((f) => [...CAPABILITIES, 'db', 'shared', 'http'].includes(folder(f.path)))
      .flatMap((f) => f.imports.filter((target) => UPPER.has(folder(target)) && target !== 'config.ts').map((target) => `${f.path} → ${target}`));
    expect(upward).toEqual([]);
  });

  it('keeps the background jobs (jobs/) below the wiring: no import into the CLI, the process wiring, the HTTP layer or the top (config.ts aside)', () => {
    const jobs = files.filter((f) => folder(f.path) === 'jobs');
    expect(jobs.length).toBeGreaterThan(0);
    const upward = jobs.flatMap((f) =>
      f.imports.filter((target) => ['cli', 'process', 'http', ''].includes(folder(target)) && target !== 'config.ts').map((target) => `${f.path} → ${target}`),
    );
    expect(upward).toEqual([]);
  });

  it('imports one way between the wiring and the processes: process/ and cli/ import platform.ts, platform.ts none of them', () => {
    const platform = files.find((f) => f.path === 'platform.ts')!;
    expect(platform.imports.filter((target) => ['cli', 'process'].includes(folder(target)) || target === 'cli.ts')).toEqual([]);
  });

  it('keeps the processes below the commands: process/ imports nothing of cli/ (cli/ runs serve, serve takes the commands as a function)', () => {
    const intoCli = files
      .filter((f) => folder(f.path) === 'process')
      .flatMap((f) => f.imports.filter((target) => folder(target) === 'cli' || target === 'cli.ts').map((target) => `${f.path} → ${target}`));
    expect(intoCli).toEqual([]);
  });

  it('has no import circle between files, type imports included', () => {
    expect(importCircles(new Map(files.map((f) => [f.path, f.imports])))).toEqual([]);
  });

  it('finds a circle where there is one (the check above can fail)', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts']],
      ['c.ts', ['a.ts', 'd.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
    ]);
    expect(importCircles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts'], ['e.ts']]);
  });

  it('has no import from a capability folder, db/ or shared/ into the HTTP layer', () => {
    const intoHttp = files
      .filter((f) => [...CAPABILITIES, 'db', 'shared'].includes(folder(f.path)))
      .flatMap((f) => f.imports.filter((target) => folder(target) === 'http').map((target) => `${f.path} → ${target}`));
    expect(intoHttp).toEqual([]);
  });

  it('keeps shared/ free of any other part of the server', () => {
    const out = files
      .filter((f) => folder(f.path) === 'shared')
      .flatMap((f) => f.imports.filter((target) => folder(target) !== 'shared').map((target) => `${f.path} → ${target}`));
    expect(out).toEqual([]);
  });

  it("keeps the settings (config.ts and each noun's in config/) to shared/ and node: the modules that use them import them, not the reverse", () => {
    const settings = files.filter((f) => f.path === 'config.ts' || folder(f.path) === 'config');
    expect(settings.length).toBeGreaterThan(1);
    expect(settings.flatMap((f) => f.imports.filter((target) => !['shared', 'config'].includes(folder(target))).map((target) => `${f.path} → ${target}`))).toEqual([]);
  });

  it('keeps db/ to itself, shared/ and node: no capability, layer above or the settings', () => {
    const db = files.filter((f) => folder(f.path) === 'db');
    expect(db.length).toBeGreaterThan(0);
    const out = db.flatMap((f) => f.imports.filter((target) => !['db', 'shared'].includes(folder(target))).map((target) => `${f.path} → ${target}`));
    expect(out).toEqual([]);
  });

  it('uses route files as routes only: nothing but http/app.ts imports a *-routes.ts', () => {
    const routeImports = files
      .filter((f) => f.path !== 'http/app.ts')
      .flatMap((f) => f.imports.filter((target) => target.endsWith('-routes.ts')).map((target) => `${f.path} → ${target}`));
    expect(routeImports).toEqual([]);
  });
});

/** Each table's folder: the one whose noun it holds (README, "Where a new line goes"). */
const TABLE_OWNERS: Record<string, string> = {
  address_counters: 'addresses',
  address_pool: 'addresses',
  address_reservations: 'addresses',
  balances: 'ledger',
  ledger_entries: 'ledger',
  callback_attempts: 'callbacks',
  callback_outbox: 'callbacks',
  chain_cursors: 'chain',
  deposit_orders: 'orders',
  deposits: 'orders',
  unconfirmed_deposits: 'orders',
  job_leases: 'jobs',
  merchants: 'merchants',
  platform_settings: 'merchants',
  payout_transactions: 'payouts',
  payout_pauses: 'payouts',
  withdrawal_policies: 'withdrawals',
  withdrawals: 'withdrawals',
  schema_migrations: 'db',
};

/** The statements of a file (its string literals, comments left out) that name a table of another folder, each as `file → tables`. */
function reachesOf(path: string): string[] {
  const text = readFileSync(join(SERVER, path), 'utf8')
    .replace(/\/\*[\s\S]*?\*\//g, '')
    .replace(/^\s*\/\/.*$/gm, '');
  const literals = text.match(/`(?:[^`\\]|\\.)*`|'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"/g) ?? [];
  return literals.flatMap((literal) => {
    // A table after FROM, JOIN, INTO, UPDATE or USING, also the second of `FROM due, merchants m`.
    const tables = [...literal.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE|USING)\s+(?:\w+(?:\s+\w+)?\s*,\s*)?([a-z_]+)\b/g)].map((m) => m[1]!);
    const foreign = [...new Set(tables.filter((table) => TABLE_OWNERS[table] !== undefined && TABLE_OWNERS[table] !== folder(path)))];
    return foreign.length > 0 ? [`${path} → ${foreign.sort().join(', ')}`] : [];
  });
}

const NUMBER_WORDS = ['No', 'One', 'Two', 'Three', 'Four', 'Five', 'Six', 'Seven', 'Eight', 'Nine', 'Ten', 'Eleven', 'Twelve'];

describe("the tables' folders", () => {
  it('gives every table the migrations make a folder', () => {
    const sql = [
      ...readdirSync(join(SERVER, 'db/migrations')).map((name) => readFileSync(join(SERVER, 'db/migrations', name), 'utf8')),
      readFileSync(join(SERVER, 'db/migrate.ts'), 'utf8'),
    ].join('\n');
    const tables = [...new Set([...sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?(\w+)/g)].map((m) => m[1]!))];
    expect(tables.filter((table) => TABLE_OWNERS[table] === undefined)).toEqual([]);
  });

  // The README says how many statements reach into another folder's table and names their files: a
  // new one is either moved to its table's folder or named there, with its reason.
  const reaches = files.flatMap((f) => reachesOf(f.path));

  it("finds each statement that reaches into another folder's table, and only those on purpose", () => {
    expect(reaches.sort()).toEqual(
      [
        'callbacks/outbox.ts → merchants',
        'callbacks/retention.ts → platform_settings',
        'callbacks/retention.ts → platform_settings',
        'ledger/ledger.ts → deposit_orders, deposits',
        'ledger/ledger.ts → schema_migrations, withdrawals',
        'orders/expiry.ts → chain_cursors',
        'orders/issued-addresses.ts → address_pool',
        'orders/issued-addresses.ts → merchants',
        'orders/order-rows.ts → merchants',
        'orders/orders.ts → address_pool',
      ].sort(),
    );
  });

  it("has the README count them and name their files (\"Where a new line goes\")", () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    const paragraph = readme.slice(readme.indexOf('**Where a new line goes.**')).split('\n\n')[0]!.replace(/\s+/g, ' ');
    expect(paragraph).toContain(`${NUMBER_WORDS[reaches.length]} statements reach into another folder's table`);
    const named = new Set([...paragraph.matchAll(/`([\w-]+\/[\w.-]+\.ts)`/g)].map((m) => m[1]!));
    expect([...new Set(reaches.map((reach) => reach.split(' → ')[0]!))].filter((path) => !named.has(path))).toEqual([]);
  });
});
