// The books themselves (migration 015, ledger/ledger.ts): the database applies every entry to its
// balance and refuses one that would take it below zero, a settlement that ends no hold, a second hold
// or settlement, and any change to an entry; checkLedger finds a balance that no longer matches its
// entries. Migration 015 books what was credited before it, and the withdrawals it covers.
import { describe, expect, it } from 'vitest';
import type { Database } from '../../../src/server/db/database.js';
import { migrate } from '../../../src/server/db/migrate.js';
import { bookDeposit, checkLedger, endHold, holdForWithdrawal, readBalances } from '../../../src/server/ledger/ledger.js';
import { DATABASES } from '../../support/platform.js';
import { useDatabase } from '../../support/test-database.js';

const MERCHANT = '11111111-1111-4111-8111-111111111111';
const ORDER = '22222222-2222-4222-8222-000000000001';
const WITHDRAWALS = ['33333333-3333-4333-8333-000000000001', '33333333-3333-4333-8333-000000000002', '33333333-3333-4333-8333-000000000003'];

async function insertMerchantAndOrder(db: Database) {
  await db.query(`INSERT INTO merchants (id, name, api_key) VALUES ($1, 'books', 'pk_test_books')`, [MERCHANT]);
  await db.query(
    `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at)
     VALUES ($1, $2, 'o-1', 'Tron', 'USDT', 'c', 'https://merchant.example/cb', 0, 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', 'data:image/png;base64,iVBORw0KGgo=', 1000000, now() + interval '1 hour')`,
    [ORDER, MERCHANT],
  );
}

async function insertDeposit(db: Database, txHash: string, amount: bigint): Promise<bigint> {
  const [row] = await db.query<{ id: bigint }>(
    `INSERT INTO deposits (network, tx_hash, log_index, block_number, order_uuid, amount, source) VALUES ('Tron', $1, 0, 1, $2, $3, 'sandbox') RETURNING id`,
    [txHash, ORDER, amount],
  );
  return row!.id;
}

/** A withdrawal row as the code before the books wrote it (no stage, no fee), or with its stage and fee since. */
async function insertWithdrawal(db: Database, uuid: string, amount: bigint, status = 'PENDING', since?: { stage: string; fee: bigint }) {
  await db.query(
    `INSERT INTO withdrawals (uuid, merchant_id, external_id, amount_units, blockchain, currency_code, destination_address, status${since ? ', stage, fee_units' : ''})
     VALUES ($1, $2, $5, $3, 'Tron', 'USDT', 'TAVtmAR779HopKtw1b3Wa52itoJxYR1Ah4', $4${since ? ', $6, $7' : ''})`,
    [uuid, MERCHANT, amount, status, `wd-${uuid.slice(-4)}`, ...(since ? [since.stage, since.fee] : [])],
  );
}

const sqlStateOf = (promise: Promise<unknown>) => promise.then(() => 'ok', (error: { code?: string }) => error.code);

describe.each(DATABASES)('the ledger on %s', (kind) => {
  let db: Database;
  useDatabase(kind, 'all', async (opened) => {
    db = opened;
    await insertMerchantAndOrder(db);
  });

  it('keeps each balance the sum of its entries, and never below zero', async () => {
    await bookDeposit(db, { merchantId: MERCHANT, network: 'Tron', depositId: await insertDeposit(db, 'aa'.repeat(32), 10_000_000n), amount: 10_000_000n });
    // The same deposit twice is refused (its id is unique among entries).
    expect(await sqlStateOf(bookDeposit(db, { merchantId: MERCHANT, network: 'Tron', depositId: 1n, amount: 10_000_000n }))).toBe('23505');
    await insertWithdrawal(db, WITHDRAWALS[0]!, 6_000_000n, 'PENDING', { stage: 'queued', fee: 1_000_000n });
    await holdForWithdrawal(db, { merchantId: MERCHANT, network: 'Tron', withdrawalUuid: WITHDRAWALS[0]!, amount: 7_000_000n });
    await insertWithdrawal(db, WITHDRAWALS[1]!, 3_000_000n, 'PENDING', { stage: 'queued', fee: 0n });
    // 3 are available: a hold of 4 would go below zero, and the database refuses it.
    expect(await sqlStateOf(holdForWithdrawal(db, { merchantId: MERCHANT, network: 'Tron', withdrawalUuid: WITHDRAWALS[1]!, amount: 4_000_000n }))).toBe('23514');
    await holdForWithdrawal(db, { merchantId: MERCHANT, network: 'Tron', withdrawalUuid: WITHDRAWALS[1]!, amount: 3_000_000n });
    expect(await sqlStateOf(holdForWithdrawal(db, { merchantId: MERCHANT, network: 'Tron', withdrawalUuid: WITHDRAWALS[1]!, amount: 1n }))).toBe('23505');
    await db.query("UPDATE withdrawals SET status = 'DONE', stage = NULL WHERE uuid = $1", [WITHDRAWALS[0]]);
    await endHold(db, WITHDRAWALS[0]!, 'spend');
    await db.query("UPDATE withdrawals SET status = 'FAILED', stage = NULL WHERE uuid = $1", [WITHDRAWALS[1]]);
    await endHold(db, WITHDRAWALS[1]!, 'release');
    // A hold ends once: a second settlement, of either kind, is refused.
    expect(await sqlStateOf(endHold(db, WITHDRAWALS[1]!, 'spend'))).toBe('23505');
    expect(await readBalances(db, MERCHANT)).toEqual([
      { blockchain: 'Tron', currency: 'USDT', available: 3_000_000, held: 0, received: 10_000_000, withdrawn: 7_000_000, owed: 0 },
      { blockchain: 'Ethereum', currency: 'USDT', available: 0, held: 0, received: 0, withdrawn: 0, owed: 0 },
    ]);
    expect(await checkLedger(db)).toMatchObject({ problems: [], unbooked: [] });
  });

  it('refuses a settlement that ends no hold of its amount, and any change to an entry', async () => {
    const entry = (kind: string, amount: bigint, withdrawal: string) =>
      db.query(`INSERT INTO ledger_entries (merchant_id, blockchain, currency, kind, amount, withdrawal_uuid) VALUES ($1, 'Tron', 'USDT', $2, $3, $4)`, [MERCHANT, kind, amount, withdrawal]);
    await insertWithdrawal(db, WITHDRAWALS[2]!, 1_000_000n, 'PENDING', { stage: 'queued', fee: 0n });
    expect(await sqlStateOf(entry('release', 1_000_000n, WITHDRAWALS[2]!))).toBe('23514');
    await entry('hold', 1_000_000n, WITHDRAWALS[2]!);
    expect(await sqlStateOf(entry('spend', 999_999n, WITHDRAWALS[2]!))).toBe('23514');
    expect(await sqlStateOf(db.query('UPDATE ledger_entries SET amount = amount + 1'))).toBe('42501');
    expect(await sqlStateOf(db.query('DELETE FROM ledger_entries'))).toBe('42501');
    expect(await checkLedger(db)).toMatchObject({ problems: [] });
  });

  it('finds a balance changed behind the entries, and a hold that does not match its withdrawal', async () => {
    await db.query("UPDATE balances SET received = received + 5, available = available + 5 WHERE merchant_id = $1 AND blockchain = 'Tron'", [MERCHANT]);
    await db.query("UPDATE withdrawals SET status = 'DONE', stage = NULL WHERE uuid = $1", [WITHDRAWALS[2]]);
    const { problems } = await checkLedger(db);
    expect(problems).toEqual([
      expect.stringMatching(/^merchant 11111111-1111-4111-8111-111111111111 Tron USDT: the entries sum to received\/available\/held\/withdrawn\/owed 10000000 2000000 1000000 7000000 0, the balance says 10000005 2000005 1000000 7000000 0$/),
      `withdrawal ${WITHDRAWALS[2]} (DONE): its hold is open`,
    ]);
  });
});

describe.each(DATABASES)('migration 015 on existing data, on %s', (kind) => {
  let db: Database;
  useDatabase(kind, { before: '015_balances_and_withdrawal_requests' }, async (opened) => {
    db = opened;
    await insertMerchantAndOrder(db);
    await insertDeposit(db, 'bb'.repeat(32), 5_000_000n);
    await insertDeposit(db, 'cc'.repeat(32), 2_000_000n);
    // Before the books: a DONE and a PENDING withdrawal the deposits cover, oldest first, then one they do not.
    await insertWithdrawal(db, WITHDRAWALS[0]!, 3_000_000n, 'DONE');
    await db.query("UPDATE withdrawals SET created_at = now() - interval '2 days' WHERE uuid = $1", [WITHDRAWALS[0]]);
    await insertWithdrawal(db, WITHDRAWALS[1]!, 3_000_000n, 'PENDING');
    await db.query("UPDATE withdrawals SET created_at = now() - interval '1 day' WHERE uuid = $1", [WITHDRAWALS[1]]);
    await insertWithdrawal(db, WITHDRAWALS[2]!, 5_000_000n, 'PENDING');
  });

  it('books every deposit credited before it, and the withdrawals its balance covers, oldest first', async () => {
    expect(await migrate(db)).toContain('015_balances_and_withdrawal_requests');
    expect(await readBalances(db, MERCHANT)).toContainEqual({ blockchain: 'Tron', currency: 'USDT', available: 1_000_000, held: 3_000_000, received: 7_000_000, withdrawn: 3_000_000, owed: 0 });
    const stages = await db.query<{ uuid: string; stage: string | null }>('SELECT uuid, stage FROM withdrawals ORDER BY uuid');
    expect(stages.map((w) => w.stage)).toEqual([null, 'queued', 'queued']);
    expect(await checkLedger(db)).toEqual({ balances: 1, entries: 5, problems: [], unbooked: [WITHDRAWALS[2]] });
  });
});
