// `partner-api addresses export` (issue 24, item 5): every issued deposit address with its derivation
// path, merchant, order and credited total; each network's highest used index and largest gap. The
// totals are the exact sums of the credited deposits, on PGlite and on PostgreSQL.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddressDeriver } from '../../../src/server/addresses/derivation.js';
import { addressesExport, csvField, exportFilters } from '../../../src/server/cli/address-commands.js';
import { orderRequest } from '../../fixtures/orders.js';
import { runCommand } from '../../support/cli.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';
import { copiedDataDirectory } from '../../support/database-templates.js';

interface Exported {
  addresses: { network: string; index: number; derivationPath: string; address: string; merchant: string; order: string; credited: string; lastCreditAt?: string }[];
  networks: { network: string; usedIndexes: number; highestIndex: number; largestGap?: { after: number; before: number; size: number } }[];
}

const JSON_TYPE = { 'Content-Type': 'application/json' };

/** RFC 4180 rows (the export quotes a field with a comma, a quote or a line break). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') row.push(field), (field = '');
    else if (c === '\r' && text[i + 1] === '\n') row.push(field), rows.push(row), (row = []), (field = ''), i++;
    else field += c;
  }
  return rows;
}

describe.each(DATABASES)('addresses export on %s', (kind) => {
  let t: TestPlatform;
  const orders: { uuid: string; blockchain: 'Tron' | 'Ethereum' }[] = [];

  beforeAll(async () => {
    t = await startTestPlatform(kind);
    const other = await t.createMerchant('=Shop, "the other"'); // a name CSV must quote, and keep a spreadsheet from running
    for (const [i, blockchain] of (['Tron', 'Tron', 'Ethereum', 'Tron', 'Ethereum'] as const).entries()) {
      const credentials = i === 1 ? other : t.merchant;
      const { data } = await t.client(credentials).POST('/partner/v1/platforms/orders', { body: orderRequest(`export-${i}`, { blockchain }) });
      orders.push({ uuid: data!.uuid, blockchain });
      // Two credits on the first order, one on the others but the last, none on the last.
      const amounts = i === 0 ? [1_500_000, 2_250_001] : i < 4 ? [10_000_000 + i] : [];
      for (const [n, amount] of amounts.entries()) {
        const path = `/sandbox/v1/orders/${data!.uuid}/deposits`;
        const response = await t.signed('POST', path, { body: JSON.stringify({ amount }), headers: { ...JSON_TYPE, 'Idempotency-Key': `export-${i}-${n}` }, credentials });
        expect(response.status).toBe(201);
      }
    }
  });
  afterAll(() => t?.close());

  const exported = async (flags: Record<string, string | boolean> = {}) => JSON.parse((await addressesExport(t.platform, exportFilters(flags))).json) as Exported;

  it('lists every issued address with its path and what was credited to it, the totals those of the deposits', async () => {
    const { addresses } = await exported();
    expect(addresses).toHaveLength(5);
    const [deposits] = await t.db.query<{ total: bigint }>('SELECT sum(amount)::bigint AS total FROM deposits');
    expect(addresses.reduce((sum, a) => sum + BigInt(a.credited), 0n)).toBe(deposits!.total);
    expect(deposits!.total).toBe(1_500_000n + 2_250_001n + 10_000_001n + 10_000_002n + 10_000_003n);
    const received = await t.db.query<{ uuid: string; received_amount: bigint }>('SELECT uuid, received_amount FROM deposit_orders');
    for (const row of received) expect(BigInt(addresses.find((a) => a.order === row.uuid)!.credited)).toBe(row.received_amount);

    const derive = { Tron: createAddressDeriver('Tron', t.platform.config.networks.Tron.xpub), Ethereum: createAddressDeriver('Ethereum', t.platform.config.networks.Ethereum.xpub) };
    for (const address of addresses) {
      const network = address.network as 'Tron' | 'Ethereum';
      expect(address.address).toBe(derive[network](address.index));
      expect(address.derivationPath).toBe(`m/44'/${network === 'Tron' ? 195 : 60}'/0'/0/${address.index}`);
    }
    const last = addresses.find((a) => a.order === orders[4]!.uuid)!;
    expect(last).toMatchObject({ credited: '0' });
    expect(last.lastCreditAt).toBeUndefined();
    // The API's date shape, UTC, in the JSON and the CSV alike (issue 49).
    expect(addresses.find((a) => a.order === orders[0]!.uuid)!.lastCreditAt).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(addresses.find((a) => a.order === orders[1]!.uuid)!.merchant).toBe('=Shop, "the other"');
  });

  it('filters by network and by the date the address was issued', async () => {
    const tron = await exported({ blockchain: 'tron' });
    expect(tron.addresses.map((a) => a.network)).toEqual(['Tron', 'Tron', 'Tron']);
    expect(tron.networks.map((n) => n.network)).toEqual(['Tron']);
    expect((await exported({ from: '2999-01-01' })).addresses).toEqual([]);
    expect((await exported({ to: '2000-01-01' })).addresses).toEqual([]);
    expect((await exported({ from: '2000-01-01', to: '2999-01-01T00:00:00Z' })).addresses).toHaveLength(5);
    // The API's date and time, UTC, as the export prints them: the first issued_at itself keeps its address.
    const [first] = (await exported()).addresses as unknown as { issuedAt: string }[];
    expect(first!.issuedAt).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect((await exported({ from: '2000-01-01 00:00:00', to: '2999-01-01 00:00:00' })).addresses).toHaveLength(5);
    expect((await exported({ from: '2999-01-01 00:00:00' })).addresses).toEqual([]);
    expect(() => exportFilters({ from: 'yesterday' })).toThrow(/--from must be a date/);
    // Days the calendar lacks: JavaScript rolled them over or counted a year 0, which the database refused (exit 70).
    for (const day of ['2026-02-31', '2026-02-29T12:00:00Z', '0000-01-01', '0000-06-01T00:00:00Z']) expect(() => exportFilters({ from: day }), day).toThrow(/--from must be a date/);
    expect(exportFilters({ from: '2028-02-29', to: '9999-12-31' }).from).toEqual(new Date('2028-02-29T00:00:00Z'));
    expect(() => exportFilters({ blockchain: 'Bitcoin' })).toThrow(/--blockchain must be Tron or Ethereum/);
  });

  it('refuses a wrong flag before it opens or makes any database', async () => {
    const dataDir = join(mkdtempSync(join(tmpdir(), 'partner-export-')), 'data');
    const outcome = await runCommand(['addresses', 'export', '--blockchain', 'Bitcoin', '--data-dir', dataDir]);
    expect(outcome.code).toBe(64);
    expect(outcome.stderr).toMatch(/--blockchain must be Tron or Ethereum/);
    expect(existsSync(dataDir)).toBe(false);
  });

  it('gives each network its highest used index and its largest gap between used indexes', async () => {
    const before = await exported();
    const tronIndexes = before.addresses.filter((a) => a.network === 'Tron').map((a) => a.index);
    expect(before.networks.find((n) => n.network === 'Tron')).toMatchObject({ usedIndexes: 3, highestIndex: Math.max(...tronIndexes) });
    // An index reserved and never handed out (a stopped process leaves such gaps): move the last Tron order far on.
    const moved = Math.max(...tronIndexes) + 40;
    await t.db.query('UPDATE deposit_orders SET address_index = $1 WHERE uuid = $2', [moved, orders[3]!.uuid]);
    const after = await exported();
    const remaining = tronIndexes.filter((i) => i !== before.addresses.find((a) => a.order === orders[3]!.uuid)!.index);
    const previous = Math.max(...remaining);
    expect(after.networks.find((n) => n.network === 'Tron')).toEqual({
      network: 'Tron',
      usedIndexes: 3,
      highestIndex: moved,
      largestGap: { after: previous, before: moved, size: moved - previous - 1 },
    });
  });

  it('writes CSV: a header, a row per address, quoted where needed, the same totals', async () => {
    const { csv, summary } = await addressesExport(t.platform, exportFilters({}));
    const [header, ...rows] = parseCsv(csv);
    expect(header).toEqual(['network', 'index', 'derivation_path', 'address', 'merchant_id', 'merchant', 'order', 'external_id', 'issued_at', 'credited_units', 'last_credit_at']);
    expect(rows).toHaveLength(5);
    expect(rows.map((r) => r[5])).toContain("'=Shop, \"the other\"");
    const [deposits] = await t.db.query<{ total: bigint }>('SELECT sum(amount)::bigint AS total FROM deposits');
    expect(rows.reduce((sum, r) => sum + BigInt(r[9]!), 0n)).toBe(deposits!.total);
    for (const row of rows) expect(row[8]).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/); // issued_at, the API's shape
    expect(rows.filter((r) => r[10] !== '').every((r) => /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/.test(r[10]!))).toBe(true);
    expect(summary).toMatch(/^Ethereum: 2 used indexes, highest \d+, no gap\nTron: 3 used indexes, highest \d+, largest gap \d+ \(between \d+ and \d+\)$/);
  });
});

describe('a CSV field', () => {
  it.each([
    ['=HYPERLINK("x")', `"'=HYPERLINK(""x"")"`],
    ['x;=1+1;y', '"x;=1+1;y"'], // one cell, whatever the separator
    ['a\t=1+1', '"a\t=1+1"'],
    [' =1+1', "' =1+1"],
    ['\u00a0=1+1', "'\u00a0=1+1"],
    ['\uff1d1+1', "'\uff1d1+1"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ['+1', "'+1"],
    ['shop, the', '"shop, the"'],
    ['TJRabPrwbZy45sbavfcjinPJC18kjpRTv1', 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv1'],
  ])('%j is written %j', (value, written) => {
    expect(csvField(value)).toBe(written);
  });
});

describe('partner-api addresses export, the command', () => {
  const dataDir = copiedDataDirectory('partner-export-');
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  // In this process through runCli (test/support/cli.ts), on a copy of a new data directory (creating one is tested elsewhere).
  it('writes the CSV to stdout and the indexes to stderr, and refuses a bad flag with 64', async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: '' };
    const { code, stdout, stderr } = await runCommand(['addresses', 'export'], env);
    expect(code).toBe(0);
    expect(stdout).toBe('network,index,derivation_path,address,merchant_id,merchant,order,external_id,issued_at,credited_units,last_credit_at\r\n');
    expect(stderr).toBe('no addresses issued\n');
    const json = await runCommand(['addresses', 'export', '--json', '--blockchain', 'Tron'], env);
    expect(JSON.parse(json.stdout)).toEqual({ addresses: [], networks: [] });
    const bad = await runCommand(['addresses', 'export', '--to', 'soon'], env);
    expect(bad).toMatchObject({ code: 64, stderr: 'partner-api: --to must be a date such as 2026-11-01, 2026-11-01 12:00:00 (UTC) or 2026-11-01T12:00:00Z (see partner-api addresses export --help)\n' });
  });

  // Issue 48: the flag says `blockchain`, as the contract; scripts that say --network keep working, told so.
  it('reads --network, the old spelling of --blockchain, with a note on stderr; both at once is a usage error', async () => {
    const env = { DATA_DIR: dataDir, DATABASE_URL: '' };
    const old = await runCommand(['addresses', 'export', '--json', '--network', 'tron'], env);
    expect(old.code).toBe(0);
    expect(JSON.parse(old.stdout)).toEqual({ addresses: [], networks: [] });
    expect(old.stderr).toBe('partner-api: --network is the old spelling of --blockchain; it still works, say --blockchain\n');
    const wrong = await runCommand(['addresses', 'export', '--network', 'Bitcoin'], env);
    expect(wrong.code).toBe(64);
    expect(wrong.stderr).toMatch(/--blockchain must be Tron or Ethereum/);
    const both = await runCommand(['addresses', 'export', '--network', 'Tron', '--blockchain', 'Tron'], env);
    expect(both).toMatchObject({ code: 64, stderr: 'partner-api: --network is the old spelling of --blockchain: give --blockchain only (see partner-api addresses export --help)\n' });
    const help = await runCommand(['addresses', 'export', '--help'], env);
    expect(help.stdout).toContain('--blockchain Tron|Ethereum');
    expect(help.stdout).not.toContain('--network');
  });
});
