// A deposit is one log (issue 23 #12): a node that once omits one of two transfers of one transaction to
// one address, and returns both at a rescan, gets the missing one credited and the other not again.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { resumeNetwork } from '../../../src/server/chain/halt.js';
import { ChainScanner } from '../../../src/server/chain/scanner.js';
import { addressTopic, TRANSFER_TOPIC } from '../../../src/server/chain/transfer-logs.js';
import type { RpcLog } from '../../../src/server/chain/rpc.js';
import type { Database } from '../../../src/server/db/database.js';
import { migrate } from '../../../src/server/db/migrate.js';
import { blockHash, startFakeChain, type FakeChain } from '../../support/fake-rpc.js';
import { DATABASES, freshDatabase } from '../../support/platform.js';

const TOKEN = '0x' + 'ab'.repeat(20);
const ADDRESS = '0x' + '5'.repeat(40);
const TX = '0x' + 'e1'.repeat(32);

function transfer(logIndex: number, amount: bigint, block = 95n): RpcLog {
  return {
    address: TOKEN,
    topics: [TRANSFER_TOPIC, '0x' + '00'.repeat(12) + '11'.repeat(20), addressTopic('Ethereum', ADDRESS)],
    data: '0x' + amount.toString(16).padStart(64, '0'),
    blockNumber: '0x' + block.toString(16),
    blockHash: blockHash(block),
    transactionHash: TX,
    logIndex: '0x' + logIndex.toString(16),
  };
}

describe.each(DATABASES)('the identity of a deposit on %s', (kind) => {
  let database: { db: Database; drop: () => Promise<void> };
  let chain: FakeChain;
  const order = randomUUID();
  const received = async () => (await database.db.query<{ received_amount: bigint }>('SELECT received_amount FROM deposit_orders WHERE uuid = $1', [order]))[0]!.received_amount;
  const deposits = async () => (await database.db.query<{ log_index: number; amount: bigint }>('SELECT log_index, amount FROM deposits ORDER BY log_index')).map((d) => [d.log_index, d.amount]);
  const scanAll = async (scanner: ChainScanner) => {
    while (await scanner.scanOnce());
  };

  beforeAll(async () => {
    chain = await startFakeChain();
    database = await freshDatabase(kind);
    await migrate(database.db);
    const merchant = randomUUID();
    await database.db.query("INSERT INTO merchants (id, name, api_key) VALUES ($1, 'm', 'pk_test_identity')", [merchant]);
    await database.db.query(
      `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at)
       VALUES ($1, $2, 'e', 'Ethereum', 'USDT', 'c', 'https://x.example/', 0, $3, 'qr', 100, now() + interval '1 hour')`,
      [order, merchant, ADDRESS],
    );
  });
  afterAll(async () => {
    await chain?.close();
    await database?.db.close();
    await database?.drop();
  });
  beforeEach(() => {
    chain.head = 100n;
  });

  const scanner = (log: { error(obj: object, msg: string): void } = { error: () => {} }) =>
    new ChainScanner({
      network: 'Ethereum',
      chain: { rpcUrl: chain.url, tokenContract: TOKEN, pollIntervalSeconds: 1, maxBlockRange: 5000, maxAddressesPerQuery: 1000, startBlock: 90, finality: 'confirmations' },
      confirmations: 1,
      watchWindowSeconds: 86_400,
      db: database.db,
      now: Date.now,
      log: { warn: () => {}, ...log },
    });

  it('credits the transfer a node omitted once, and the other one not twice', async () => {
    chain.logs = [transfer(5, 2n)]; // the node omits log 3 of the transaction
    await scanAll(scanner());
    expect(await received()).toBe(2n);

    chain.logs = [transfer(3, 1n), transfer(5, 2n)]; // both, at a rescan of the same blocks
    await resumeNetwork(database.db, 'Ethereum', 90n);
    await scanAll(scanner());
    expect(await deposits()).toEqual([[3, 1n], [5, 2n]]);
    expect(await received()).toBe(3n); // today's main: 4 (log 5 credited twice, log 3 never)

    await resumeNetwork(database.db, 'Ethereum', 90n); // and again: nothing more
    await scanAll(scanner());
    expect(await received()).toBe(3n);
  });

  it('refuses, and reports, a log credited before that the node now answers with another amount', async () => {
    const errors: string[] = [];
    chain.logs = [transfer(3, 1n), transfer(5, 7n)];
    await resumeNetwork(database.db, 'Ethereum', 90n);
    await scanAll(scanner({ error: (_obj, msg) => void errors.push(msg) }));
    expect(await received()).toBe(3n);
    expect(errors.some((e) => /log 5 .* another amount/.test(e))).toBe(true);
  });

  it('recognises the transaction re-mined in another block (new log indexes, same transfers)', async () => {
    chain.logs = [transfer(10, 1n, 97n), transfer(12, 2n, 97n)];
    await resumeNetwork(database.db, 'Ethereum', 90n);
    await scanAll(scanner());
    expect(await received()).toBe(3n);
    expect(await deposits()).toHaveLength(2);
  });
});
