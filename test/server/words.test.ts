// The README's "Words used here" in the code: a word the table gives one meaning has it in src/server
// too, so that a reader who looks a name up finds what the table says.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

const SERVER = resolve(import.meta.dirname, '../../src/server');

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

  it('imports `Network` from shared/network.ts, where it is declared (chain/ and cli/ are renamed apart)', () => {
    expect(uses(/\bNetwork\b.*from '[./]*(?:addresses\/)?derivation\.js'/, (path) => !path.startsWith('chain/') && !path.startsWith('cli/'))).toEqual([]);
  });

  it("says cursor only of the API's page token in the read side (a scan's place is its position)", () => {
    // Comments included: they are where the word was used of the chain.
    const readSide = sourceFiles(SERVER).filter((file) => ['orders/', 'callbacks/', 'db/pages.ts', 'http/', 'withdrawals/'].some((prefix) => relative(SERVER, file).startsWith(prefix)));
    const lines = readSide.flatMap((file) => readFileSync(file, 'utf8').split('\n').map((line) => `${relative(SERVER, file)}: ${line.trim()}`));
    expect(lines.filter((line) => /scan cursor|cursors? of the chain|chain's cursor|network's cursor/i.test(line))).toEqual([]);
  });
});
