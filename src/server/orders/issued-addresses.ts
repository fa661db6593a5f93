// Every deposit address the platform issued, with what was credited to it: what an operator needs to
// sweep the deposits (`partner-api addresses export`). An address is issued with its order, so the
// orders are the register of used indexes; an index drawn into the pool and not yet taken is not
// used, and one below a used index would be a gap (addresses/pool.ts keeps none).
import type { Sql } from '../db/database.js';
import { parseAccountXpub } from '../addresses/derivation.js';
import type { Network } from '../shared/network.js';

export interface IssuedAddress {
  network: Network;
  index: number;
  /** BIP44 path from the wallet's root: the account of the configured xpub, external chain 0. */
  derivationPath: string;
  address: string;
  merchantId: string;
  merchant: string;
  order: string;
  externalId: string;
  issuedAt: Date;
  /** Smallest units (USDT: 6 decimals), the exact sum of the credited deposits. */
  credited: bigint;
  lastCreditAt: Date | undefined;
}

export interface NetworkIndexes {
  network: Network;
  usedIndexes: number;
  highestIndex: number;
  /**
   * The longest run of unused indexes before a used one (a wallet's gap limit must cover it); `after`
   * is −1 for the run from index 0 to the lowest used index, which a wallet restored from the seed
   * must cross too.
   */
  largestGap: { after: number; before: number; size: number } | undefined;
}

export interface AddressFilter {
  network?: Network;
  /** Issued at or after. */
  from?: Date;
  /** Issued before. */
  to?: Date;
}

const COIN_TYPES: Record<Network, number> = { Tron: 195, Ethereum: 60 };
const HARDENED = 0x80000000;

/** `m/44'/coin'/account'/0/`, the path of the network's addresses but their index; the account is the xpub's child number. */
export function addressPathPrefix(network: Network, xpub: string): string {
  const account = parseAccountXpub(xpub).index - HARDENED;
  return `m/44'/${COIN_TYPES[network]}'/${account}'/0/`;
}

export async function issuedAddresses(db: Sql, xpubs: Record<Network, string>, filter: AddressFilter = {}): Promise<IssuedAddress[]> {
  const rows = await db.query<{
    network: Network; address_index: bigint; address: string; merchant_id: string; merchant: string; uuid: string; external_id: string;
    created_at: Date; credited: bigint; last_credit_at: Date | null;
  }>(
    `SELECT o.blockchain AS network, o.address_index, o.address, o.merchant_id, m.name AS merchant, o.uuid, o.external_id, o.created_at,
            COALESCE(SUM(d.amount), 0)::bigint AS credited, MAX(d.credited_at) AS last_credit_at
       FROM deposit_orders o
       JOIN merchants m ON m.id = o.merchant_id
       LEFT JOIN deposits d ON d.order_uuid = o.uuid
      WHERE ($1::text IS NULL OR o.blockchain = $1)
        AND ($2::timestamptz IS NULL OR o.created_at >= $2)
        AND ($3::timestamptz IS NULL OR o.created_at < $3)
      GROUP BY o.uuid, m.name
      ORDER BY o.blockchain, o.address_index`,
    [filter.network ?? null, filter.from?.toISOString() ?? null, filter.to?.toISOString() ?? null],
  );
  const prefixes = { Tron: addressPathPrefix('Tron', xpubs.Tron), Ethereum: addressPathPrefix('Ethereum', xpubs.Ethereum) };
  return rows.map((row) => {
    const index = Number(row.address_index);
    return {
      network: row.network,
      index,
      derivationPath: prefixes[row.network] + index,
      address: row.address,
      merchantId: row.merchant_id,
      merchant: row.merchant,
      order: row.uuid,
      externalId: row.external_id,
      issuedAt: row.created_at,
      credited: row.credited,
      lastCreditAt: row.last_credit_at ?? undefined,
    };
  });
}

/** Each network's used indexes: the highest, and the largest gap before a used one, from index 0 on (all time). */
export async function networkIndexes(db: Sql, network?: Network): Promise<NetworkIndexes[]> {
  const rows = await db.query<{ network: Network; used: bigint; highest: bigint; gap_after: bigint | null; gap_before: bigint | null }>(
    `WITH used AS (
       SELECT blockchain AS network, address_index,
              COALESCE(lag(address_index) OVER (PARTITION BY blockchain ORDER BY address_index), -1) AS previous
         FROM deposit_orders WHERE ($1::text IS NULL OR blockchain = $1)
     ), gaps AS (
       SELECT DISTINCT ON (network) network, previous AS gap_after, address_index AS gap_before
         FROM used WHERE address_index - previous > 1
        ORDER BY network, address_index - previous DESC, previous
     )
     SELECT u.network, count(*)::bigint AS used, max(u.address_index)::bigint AS highest, g.gap_after, g.gap_before
       FROM used u LEFT JOIN gaps g ON g.network = u.network
      GROUP BY u.network, g.gap_after, g.gap_before
      ORDER BY u.network`,
    [network ?? null],
  );
  return rows.map((row) => ({
    network: row.network,
    usedIndexes: Number(row.used),
    highestIndex: Number(row.highest),
    largestGap:
      row.gap_after === null || row.gap_before === null
        ? undefined
        : { after: Number(row.gap_after), before: Number(row.gap_before), size: Number(row.gap_before - row.gap_after - 1n) },
  }));
}

/**
 * Whether the address is one of the platform's own deposit addresses on the network: issued to an order,
 * or derived into the shared pool for the next (a withdrawal must not pay into the deposit wallet). The
 * one reach into the addresses' table from here, on purpose: both registers answer in one query.
 */
export async function isDepositAddress(sql: Sql, network: Network, address: string): Promise<boolean> {
  const [row] = await sql.query<{ own: boolean }>(
    `SELECT EXISTS (SELECT 1 FROM deposit_orders WHERE blockchain = $1 AND address = $2)
         OR EXISTS (SELECT 1 FROM address_pool WHERE network = $1 AND address = $2) AS own`,
    [network, address],
  );
  return row!.own;
}
