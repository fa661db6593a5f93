// `partner-api addresses export`: every issued deposit address with its derivation path and what was
// credited to it, as CSV (the default, for a spreadsheet or a sweeping script) or JSON; and each
// network's highest used index and largest gap (in the JSON, and on stderr beside the CSV).
import { issuedAddresses, networkIndexes, type IssuedAddress, type NetworkIndexes } from '../orders/issued-addresses.js';
import type { Platform } from '../platform.js';
import { UsageError } from './errors.js';
import { dateFlag, networkFlag, type Flags } from './flags.js';
import { blockchainFlag, withPlatform, type Command } from './command.js';
import { platformDateTime } from '../shared/time.js';

const COLUMNS = ['network', 'index', 'derivation_path', 'address', 'merchant_id', 'merchant', 'order', 'external_id', 'issued_at', 'credited_units', 'last_credit_at'];

/** A formula's first character, after any white space (a no-break space too), in ASCII or full width. */
const FORMULA_START = /^[\s\u00a0\u3000]*[=+\-@\uff1d\uff0b\uff0d\uff20]|^[\t\r]/u;

/**
 * RFC 4180, for whatever separator the reader's locale uses: a field with a comma, a semicolon, a tab, a
 * quote or a line break is quoted, its quotes doubled, so that no part of it becomes a cell of its own
 * (`x;=1+1;y` in a `;` spreadsheet). A field a spreadsheet would run as a formula (merchants choose their
 * names and external ids: `=HYPERLINK(…)`, ` =1+1`, `＝1+1`) starts with an apostrophe instead, OWASP's
 * advice for CSV injection.
 */
export function csvField(value: string): string {
  const inert = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",;\t\r\n]/.test(inert) ? `"${inert.replaceAll('"', '""')}"` : inert;
}

function csvRow(address: IssuedAddress): string {
  return [
    address.network, String(address.index), address.derivationPath, address.address, address.merchantId, address.merchant, address.order,
    address.externalId, platformDateTime(address.issuedAt), String(address.credited), address.lastCreditAt ? platformDateTime(address.lastCreditAt) : '',
  ].map(csvField).join(',');
}

function gapPlace({ after, before }: { after: number; before: number }): string {
  return after < 0 ? `before ${before}, the lowest used index` : `between ${after} and ${before}`;
}

function indexesLine(network: NetworkIndexes): string {
  const gap = network.largestGap ? `largest gap ${network.largestGap.size} (${gapPlace(network.largestGap)})` : 'no gap';
  return `${network.network}: ${network.usedIndexes} used indexes, highest ${network.highestIndex}, ${gap}`;
}

export type ExportFilters = ReturnType<typeof exportFilters>;

/** The export's flags, checked before any database is opened: a wrong one is refused at once. */
export function exportFilters(flags: Flags) {
  const network = flags.blockchain === undefined ? undefined : networkFlag(flags, 'blockchain');
  const from = dateFlag(flags, 'from');
  const to = dateFlag(flags, 'to');
  if (from && to && from >= to) throw new UsageError('--from must be before --to');
  return { network, from, to };
}

export async function addressesExport(platform: Platform, { network, from, to }: ExportFilters): Promise<{ json: string; csv: string; summary: string }> {
  const xpubs = { Tron: platform.config.networks.Tron.xpub, Ethereum: platform.config.networks.Ethereum.xpub };
  const addresses = await issuedAddresses(platform.db, xpubs, { network, from, to });
  const networks = await networkIndexes(platform.db, network);
  // Times in the API's date shape (UTC), as in the CSV.
  const shown = addresses.map((a) => ({ ...a, issuedAt: platformDateTime(a.issuedAt), lastCreditAt: a.lastCreditAt && platformDateTime(a.lastCreditAt) }));
  const json = JSON.stringify(
    { addresses: shown, networks },
    (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value), // exact amounts, as strings
    2,
  );
  const csv = [COLUMNS.join(','), ...addresses.map(csvRow)].join('\r\n') + '\r\n';
  return { json, csv, summary: networks.map(indexesLine).join('\n') || 'no addresses issued' };
}

export const ADDRESS_COMMANDS: Command[] = [
  {
    words: ['addresses', 'export'],
    summary: 'lists every issued deposit address with its derivation path, merchant, order and credited total (CSV, or JSON), and each network\'s highest used index and largest gap',
    flags: {
      blockchain: blockchainFlag("only this network's addresses"),
      from: { value: 'DATE', description: 'only addresses issued at or after this date (2026-11-01, or 2026-11-01T12:00:00Z)' },
      to: { value: 'DATE', description: 'only addresses issued before this date' },
      json: { description: 'print JSON (the addresses and each network\'s indexes) instead of CSV' },
    },
    example: 'partner-api addresses export --blockchain Tron --from 2026-11-01 > tron-addresses.csv',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const filters = exportFilters(flags);
      const exported = await withPlatform(io, config, (p) => addressesExport(p, filters));
      if (flags.json) io.stdout.write(exported.json + '\n');
      else {
        io.stdout.write(exported.csv);
        io.stderr.write(exported.summary + '\n'); // beside the CSV, not in it
      }
    },
  },
];
