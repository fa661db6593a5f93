// The chain scanner against a JSON-RPC node whose chain the test controls.
import { readFileSync } from 'node:fs';
import { createServer, request as httpRequest } from 'node:http';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ChainScanner, ScannerStartError } from '../../../src/server/chain/scanner.js';
import { acceptedTransfers, addressTopic, logToTransfer, TRANSFER_TOPIC } from '../../../src/server/chain/transfer-logs.js';
import { USDT_CONTRACTS, type ChainConfig } from '../../../src/server/config.js';
import { isFinalizedBlockMissing, isLogLimitError, isUnsupportedTag, JsonRpcClient, RpcError, suggestedRange, type RpcLog } from '../../../src/server/chain/rpc.js';
import { resumeNetwork } from '../../../src/server/chain/halt.js';
import { startFakeChain, type FakeChain } from '../../support/fake-rpc.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';
import { orderRequest } from '../../fixtures/orders.js';

const TOKEN = '0x' + 'ab'.repeat(20);
const NOW = Date.now();
let txCounter = 0;

function transferLog(network: 'Tron' | 'Ethereum', to: string, amount: bigint, block: number, logIndex = 0, txHash?: string): RpcLog {
  return {
    address: TOKEN,
    topics: [TRANSFER_TOPIC, '0x' + '00'.repeat(12) + '11'.repeat(20), addressTopic(network, to)],
    data: '0x' + amount.toString(16).padStart(64, '0'),
    blockNumber: '0x' + block.toString(16),
    transactionHash: txHash ?? '0x' + (++txCounter).toString(16).padStart(64, '0'),
    logIndex: '0x' + logIndex.toString(16),
    removed: false,
  };
}

describe.each(DATABASES)('the chain scanner on %s', (kind) => {
  let t: TestPlatform;
  let chain: FakeChain;

  beforeAll(async () => {
    chain = await startFakeChain();
    t = await startTestPlatform(kind, { now: () => NOW });
  });
  afterAll(async () => {
    await t?.close();
    await chain?.close();
  });
  beforeEach(async () => {
    chain.logs = [];
    chain.calls = [];
    chain.head = 100n;
    chain.finalized = undefined;
    chain.blockTime = () => Math.floor(Date.now() / 1000);
    await t.db.query('DELETE FROM chain_cursors');
  });

  function scanner(network: 'Tron' | 'Ethereum', chainConfig: Partial<ChainConfig> = {}, confirmations = 3) {
    return new ChainScanner({
      network,
      chain: { rpcUrl: chain.url, tokenContract: TOKEN, pollIntervalSeconds: 1, maxBlockRange: 5000, maxAddressesPerQuery: 1000, startBlock: 90, finality: 'confirmations', ...chainConfig },
      confirmations,
      watchWindowSeconds: 7 * 86_400,
      db: t.db,
      now: () => NOW,
    });
  }

  async function order(externalId: string, blockchain: 'Tron' | 'Ethereum') {
    const { data } = await t.client().POST('/partner/v1/platforms/orders', {
      body: orderRequest(externalId, { blockchain }),
    });
    return data!;
  }

  async function read(uuid: string) {
    return (await t.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid } } })).data!;
  }

  it('credits only confirmed transfers, each exactly once, even when blocks are scanned again', async () => {
    const a = await order('scan-a', 'Ethereum');
    const b = await order('scan-b', 'Ethereum');
    const shared = '0x' + 'cd'.repeat(32);
    chain.logs = [
      transferLog('Ethereum', a.address, 4_000_000n, 95, 0, shared),
      transferLog('Ethereum', a.address, 6_000_000n, 95, 1, shared), // two transfers in one transaction
      transferLog('Ethereum', b.address, 1n, 96),
      { ...transferLog('Ethereum', b.address, 99n, 96, 2), removed: true },
      transferLog('Ethereum', '0x' + 'ef'.repeat(20), 5n, 96, 3), // nobody's address
      transferLog('Ethereum', b.address, 7n, 99), // not yet confirmed at head 100
    ];
    const s = scanner('Ethereum');
    const first = await s.scanOnce();
    expect(first).toMatchObject({ fromBlock: 90n, toBlock: 98n });
    expect(await read(a.uuid)).toMatchObject({ receivedAmount: 10_000_000, status: 'DONE' });
    expect(await read(b.uuid)).toMatchObject({ receivedAmount: 1, status: 'NEW' });
    expect(await s.scanOnce()).toBeUndefined(); // nothing new is confirmed

    chain.head = 101n;
    expect(await s.scanOnce()).toMatchObject({ fromBlock: 99n, toBlock: 99n });
    expect((await read(b.uuid)).receivedAmount).toBe(8);

    await resumeNetwork(t.db, 'Ethereum', 90n); // the operator's rewind
    expect(await s.scanOnce()).toMatchObject({ fromBlock: 90n, toBlock: 99n });
    expect((await read(a.uuid)).receivedAmount).toBe(10_000_000);
    expect((await read(b.uuid)).receivedAmount).toBe(8);
    const [deposits] = await t.db.query<{ n: bigint }>('SELECT count(*)::bigint AS n FROM deposits WHERE order_uuid IN ($1, $2)', [a.uuid, b.uuid]);
    expect(deposits!.n).toBe(4n);
    const [events] = await t.db.query<{ n: bigint }>("SELECT count(*)::bigint AS n FROM callback_outbox WHERE order_uuid IN ($1, $2) AND event = 'order.deposit'", [a.uuid, b.uuid]);
    expect(events!.n).toBe(4n);
  });

  it('splits queries by block range and by address count', async () => {
    await Promise.all(Array.from({ length: 5 }, (_, i) => order(`batch-${i}`, 'Ethereum')));
    chain.head = 124n;
    const s = scanner('Ethereum', { maxBlockRange: 10, maxAddressesPerQuery: 2, startBlock: 100 }, 1);
    const ranges = [];
    for (let r = await s.scanOnce(); r; r = await s.scanOnce()) ranges.push([r.fromBlock, r.toBlock]);
    expect(ranges).toEqual([[100n, 109n], [110n, 119n], [120n, 124n]]);
    // More watched orders than one query carries: all the token's Transfers of each range (issue 33),
    // one query per range and the second read of its last block by hash, whatever the number of orders.
    const getLogs = chain.calls.filter((c) => c.method === 'eth_getLogs').map((c) => c.params[0] as { topics: string[]; fromBlock?: string; blockHash?: string });
    expect(getLogs.every((filter) => filter.topics.length === 1)).toBe(true);
    expect(getLogs.filter((filter) => filter.fromBlock !== undefined)).toHaveLength(3);
    expect(getLogs.filter((filter) => filter.blockHash !== undefined)).toHaveLength(3);
  });

  it('with 3,000 open orders asks for all the token\'s Transfers: 2 eth_getLogs for the range (by address: 4), the others\' transfers not counted as ignored (issue 33)', async () => {
    const paid = await order('many-paid', 'Ethereum');
    const [owner] = await t.db.query<{ merchant_id: string }>('SELECT merchant_id FROM deposit_orders WHERE uuid = $1', [paid.uuid]);
    // Addresses of decimal digits only: their EIP-55 form is the same text.
    await t.db.query(
      `INSERT INTO deposit_orders (uuid, merchant_id, external_id, blockchain, currency, customer_id, callback_url, address_index, address, address_qr, min_amount, expired_at)
       SELECT gen_random_uuid(), $1, 'many-' || i, 'Ethereum', 'USDT', 'c', 'https://merchant.example/cb', 1000000 + i, '0x' || lpad(i::text, 40, '0'), 'data:', 1, now() + interval '1 hour'
         FROM generate_series(1, 3000) AS i`,
      [owner!.merchant_id],
    );
    try {
      chain.logs = [
        ...Array.from({ length: 50 }, (_, i) => transferLog('Ethereum', '0x' + (i + 1).toString(16).padStart(2, '0').repeat(20), 1n, 91 + (i % 9))), // nobody's orders
        transferLog('Ethereum', '0x' + '7'.padStart(40, '0'), 8n, 94), // a bulk order's
        transferLog('Ethereum', paid.address, 6n, 95),
      ];
      const s = scanner('Ethereum', { startBlock: 90 });
      const result = await s.scanOnce();
      expect(result).toMatchObject({ query: 'token', fromBlock: 90n, toBlock: 98n, logs: 52, ignored: 0 });
      const getLogs = chain.calls.filter((c) => c.method === 'eth_getLogs').map((c) => c.params[0] as { topics: unknown[]; fromBlock?: string; blockHash?: string });
      expect(getLogs).toHaveLength(2); // the range (on to the latest block), and its last block by hash
      expect(getLogs.every((f) => f.topics.length === 1)).toBe(true);
      expect((await read(paid.uuid)).receivedAmount).toBe(6);
      const [bulk] = await t.db.query<{ received_amount: bigint }>("SELECT received_amount FROM deposit_orders WHERE external_id = 'many-7'");
      expect(bulk!.received_amount).toBe(8n);
    } finally {
      // Out of the watch from here on (their credits stay: the books are append-only).
      await t.db.query("UPDATE deposit_orders SET expired_at = now() - interval '30 days' WHERE external_id LIKE 'many-%'");
    }
  });

  it('asks by address while the watched orders fit in one query (maxAddressesPerQuery)', async () => {
    const orders = await Promise.all(Array.from({ length: 3 }, (_, i) => order(`by-address-${i}`, 'Ethereum')));
    await t.db.query("UPDATE deposit_orders SET expired_at = now() - interval '30 days' WHERE blockchain = 'Ethereum' AND NOT uuid = ANY($1::uuid[])", [orders.map((o) => o.uuid)]);
    chain.head = 110n;
    chain.logs = [transferLog('Ethereum', orders[0]!.address, 7n, 95), transferLog('Ethereum', '0x' + '34'.repeat(20), 9n, 95)];
    const s = scanner('Ethereum', { maxAddressesPerQuery: 3, startBlock: 90 }, 1);
    expect(await s.scanOnce()).toMatchObject({ query: 'addresses', fromBlock: 90n, toBlock: 110n });
    const topics = chain.calls.filter((c) => c.method === 'eth_getLogs').map((c) => (c.params[0] as { topics: (string | string[])[] }).topics);
    expect(topics.every((t) => Array.isArray(t[2]) && t[2].length === 3)).toBe(true);
    expect((await read(orders[0]!.uuid)).receivedAmount).toBe(7);
  });

  it('queries only the addresses of orders inside their watch window', async () => {
    const old = await order('old-1', 'Tron');
    const fresh = await order('fresh-1', 'Tron');
    await t.db.query("UPDATE deposit_orders SET expired_at = now() - interval '8 days' WHERE uuid = $1", [old.uuid]);
    chain.logs = [transferLog('Tron', old.address, 5n, 95), transferLog('Tron', fresh.address, 5n, 95)];
    await scanner('Tron').scanOnce();
    const topics = chain.calls.filter((c) => c.method === 'eth_getLogs').flatMap((c) => (c.params[0] as { topics: string[][] }).topics[2]!);
    expect(topics).toContain(addressTopic('Tron', fresh.address));
    expect(topics).not.toContain(addressTopic('Tron', old.address));
    expect((await read(fresh.uuid)).receivedAmount).toBe(5);
    expect((await read(old.uuid)).receivedAmount).toBe(0);
  });

  it('judges the watch window at the block\'s time: catching up after an outage still honours a late payment', async () => {
    const late = await order('catch-up-1', 'Ethereum');
    // The order expired 8 days ago: outside the 7-day window now, inside it two days ago.
    await t.db.query("UPDATE deposit_orders SET expired_at = now() - interval '8 days' WHERE uuid = $1", [late.uuid]);
    const nowSeconds = Math.floor(Date.now() / 1000);
    chain.blockTime = (block) => (block <= 95n ? nowSeconds - 2 * 86_400 : nowSeconds);
    chain.logs = [transferLog('Ethereum', late.address, 20_000_000n, 93), transferLog('Ethereum', late.address, 1n, 97)];
    const s = scanner('Ethereum', { maxBlockRange: 5 });
    await s.scanOnce(); // blocks 90–94, made two days ago: inside the window then
    expect(await read(late.uuid)).toMatchObject({ receivedAmount: 20_000_000, status: 'DONE' });
    await s.scanOnce(); // blocks 95–98: the range is judged at its first block, still two days old
    expect((await read(late.uuid)).receivedAmount).toBe(20_000_001);
    chain.logs.push(transferLog('Ethereum', late.address, 5n, 100));
    chain.head = 103n;
    await s.scanOnce(); // blocks 99–101, made now: the window has closed
    expect((await read(late.uuid)).receivedAmount).toBe(20_000_001);
  });

  it('refuses, without stopping, a transfer that would take a total past 2^53 − 1', async () => {
    const o = await order('huge-1', 'Ethereum');
    chain.logs = [transferLog('Ethereum', o.address, 2n ** 60n, 91), transferLog('Ethereum', o.address, 7n, 92)];
    const s = scanner('Ethereum');
    expect(await s.scanOnce()).toMatchObject({ toBlock: 98n });
    expect((await read(o.uuid)).receivedAmount).toBe(7);
    expect(await s.scanOnce()).toBeUndefined(); // the scan position moved on
  });

  it('refuses a first scan that would skip the deposits of orders already waiting, unless told where to start', async () => {
    await order('waiting-1', 'Ethereum');
    await expect(scanner('Ethereum', { startBlock: undefined }).scanOnce()).rejects.toThrow(ScannerStartError);
    await expect(scanner('Ethereum', { startBlock: undefined }).scanOnce()).rejects.toThrow(/ETHEREUM_START_BLOCK is required/);
    expect(await scanner('Ethereum', { startBlock: 95 }).scanOnce()).toMatchObject({ fromBlock: 95n });
    expect(await scanner('Ethereum', { startBlock: undefined }).scanOnce()).toBeUndefined(); // the scan position exists now
  });

  it('speaks Tron: 20-byte hex addresses without 41, transaction ids without 0x', async () => {
    const o = await order('tron-1', 'Tron');
    const log = transferLog('Tron', o.address, 2_500_000n, 95);
    expect(log.topics[2]).toMatch(/^0x0{24}[0-9a-f]{40}$/);
    chain.logs = [log];
    await scanner('Tron').scanOnce();
    const [deposit] = await t.db.query<{ tx_hash: string }>('SELECT tx_hash FROM deposits WHERE order_uuid = $1', [o.uuid]);
    expect(deposit!.tx_hash).toBe(log.transactionHash.slice(2));
    expect(await read(o.uuid)).toMatchObject({ receivedAmount: 2_500_000, status: 'DONE' });
  });

  it('uses the node\'s finalized block when so configured', async () => {
    const o = await order('final-1', 'Ethereum');
    chain.logs = [transferLog('Ethereum', o.address, 3n, 97)];
    chain.finalized = 96n;
    const s = scanner('Ethereum', { finality: 'finalized' }, 1);
    expect(await s.scanOnce()).toMatchObject({ toBlock: 96n });
    expect((await read(o.uuid)).receivedAmount).toBe(0);
    chain.finalized = 97n;
    await s.scanOnce();
    expect((await read(o.uuid)).receivedAmount).toBe(3);
  });
});

describe('the JSON-RPC client', () => {
  it('sends a URL\'s user and password as Basic authorization, never in the URL', async () => {
    const chain = await startFakeChain();
    const seen: (string | undefined)[] = [];
    const proxy = createServer((request, response) => {
      seen.push(request.headers.authorization);
      request.pipe(
        httpRequest(chain.url, { method: 'POST', headers: { 'content-type': 'application/json' } }, (upstream) => upstream.pipe(response)),
      );
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    try {
      const port = (proxy.address() as { port: number }).port;
      chain.head = 42n;
      expect(await new JsonRpcClient(`http://node%40user:p%3Ass@127.0.0.1:${port}/`).blockNumber()).toBe(42n);
      expect(seen).toEqual([`Basic ${Buffer.from('node@user:p:ss').toString('base64')}`]);
    } finally {
      proxy.close();
      await chain.close();
    }
  });
});

describe('logToTransfer', () => {
  it('ignores removed logs, other events and malformed topics', () => {
    const log = transferLog('Ethereum', '0x9858EfFD232B4033E47d90003D41EC34EcaEda94', 1n, 1);
    expect(logToTransfer('Ethereum', log)?.to).toBe('0x9858EfFD232B4033E47d90003D41EC34EcaEda94');
    expect(logToTransfer('Ethereum', { ...log, removed: true })).toBeUndefined();
    expect(logToTransfer('Ethereum', { ...log, topics: ['0x' + '00'.repeat(32), ...log.topics.slice(1)] })).toBeUndefined();
    expect(logToTransfer('Ethereum', { ...log, topics: log.topics.slice(0, 2) })).toBeUndefined();
  });
});

describe('the scanner on a Tron node (fixtures in Tron\'s JSON-RPC format)', () => {
  const fixture = (name: string) => JSON.parse(readFileSync(new URL(`../../fixtures/tron/${name}`, import.meta.url), 'utf8')) as { result: unknown };

  it('credits the USDT TRC-20 transfers of the recorded-format logs to the Tron orders, once', async () => {
    const chain = await startFakeChain();
    const t = await startTestPlatform('pglite');
    try {
      chain.head = BigInt(fixture('eth_blockNumber.json').result as string);
      chain.logs = fixture('eth_getLogs.json').result as RpcLog[];
      // A fresh sandbox platform's first two Tron orders get the test wallet's first two addresses.
      const orders = [];
      for (const externalId of ['tron-fixture-1', 'tron-fixture-2']) {
        const { data } = await t.client().POST('/partner/v1/platforms/orders', {
          body: orderRequest(externalId),
        });
        orders.push(data!);
      }
      expect(orders.map((o) => o.address)).toEqual(['TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', 'TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK']);
      const scanner = new ChainScanner({
        network: 'Tron',
        chain: { rpcUrl: chain.url, tokenContract: USDT_CONTRACTS.Tron, pollIntervalSeconds: 3, maxBlockRange: 5000, maxAddressesPerQuery: 1000, startBlock: 0x4ee2908, finality: 'confirmations' },
        confirmations: 20,
        watchWindowSeconds: 7 * 86_400,
        db: t.db,
        now: Date.now,
      });
      while (await scanner.scanOnce());
      await resumeNetwork(t.db, 'Tron', BigInt(0x4ee2908));
      while (await scanner.scanOnce()); // scanned again: nothing is credited twice
      const read = async (uuid: string) => (await t.client().GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid } } })).data!;
      expect(await read(orders[0]!.uuid)).toMatchObject({ receivedAmount: 3_000_000, status: 'DONE' });
      expect(await read(orders[1]!.uuid)).toMatchObject({ receivedAmount: 5_000_000, status: 'DONE' });
      const deposits = await t.db.query<{ tx_hash: string; log_index: number }>('SELECT tx_hash, log_index FROM deposits ORDER BY block_number, log_index');
      expect(deposits.map((d) => d.tx_hash.slice(0, 10))).toEqual(['24156204ff', '99fe15fd2a', '0fad1c9012', '0fad1c9012']);
      expect(deposits.map((d) => d.log_index)).toEqual([1, 4, 3, 4]);
      const getLogs = chain.calls.find((c) => c.method === 'eth_getLogs')!.params[0] as { address: string; toBlock: string };
      expect(getLogs.address).toBe('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c');
      expect(BigInt(getLogs.toBlock)).toBe(chain.head); // caught up, it reads on to the latest block for unconfirmed transfers…
      const [position] = await t.db.query<{ next_block: bigint }>("SELECT next_block FROM chain_cursors WHERE network = 'Tron'");
      expect(position!.next_block).toBe(chain.head - 18n); // …and credits up to the confirmed head only: 20 confirmations
    } finally {
      await t.close();
      await chain.close();
    }
  });
});

describe('acceptedTransfers', () => {
  it('keeps only the token\'s Transfers to requested addresses, drops a log answered twice, and numbers each transaction\'s transfers to an address', () => {
    const to = '0x9858EfFD232B4033E47d90003D41EC34EcaEda94';
    const tx = '0x' + 'ee'.repeat(32);
    const first = transferLog('Ethereum', to, 1n, 5, 3, tx);
    const second = transferLog('Ethereum', to, 2n, 5, 8, tx);
    const foreignToken = { ...transferLog('Ethereum', to, 9n, 5, 4), address: '0x' + 'cc'.repeat(20) };
    const notAsked = transferLog('Ethereum', '0x' + '12'.repeat(20), 9n, 5, 5);
    const { transfers, ignored, unrequested } = acceptedTransfers('Ethereum', [second, foreignToken, first, notAsked, { ...first }], TOKEN, new Set([addressTopic('Ethereum', to)]));
    expect(transfers.map((t) => [t.logIndex, t.ordinal, t.amount])).toEqual([
      [3, 0, 1n],
      [8, 1, 2n],
    ]);
    expect(ignored).toBe(2); // the foreign token's log and the duplicate
    expect(unrequested).toBe(1); // the token's Transfer to an address not asked for
  });
});

describe('recognising node errors', () => {
  const error = (code: number | undefined, message: string, status?: number) => new RpcError(message, code, status);
  const tronFixture = JSON.parse(readFileSync(new URL('../../fixtures/tron/eth_getLogs.exceed-block-range.json', import.meta.url), 'utf8')) as { error: { code: number; message: string } };

  it('splits on the result and range limits providers send, and on nothing else', () => {
    const limits = [
      error(-32005, 'query returned more than 10000 results'), // geth, java-tron
      error(-32005, 'query returned more than 10000 results. Try with this block range [0x30A4E4, 0x30A6F1].'), // Infura
      error(-32602, 'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. Based on your parameters, this block range should work: [0x1, 0x2]'), // Alchemy
      error(-32602, 'eth_getLogs is limited to a 10,000 range'), // QuickNode
      error(-32600, 'block range is too wide'), // Ankr
      error(-32000, 'exceed maximum block range: 50000'),
      error(tronFixture.error.code, tronFixture.error.message), // TronGrid
      error(-32000, 'query exceeds max results 20000'),
    ];
    for (const e of limits) expect(isLogLimitError(e), e.message).toBe(true);
    const others = [error(-32005, 'daily request count exceeded, request rate limited'), error(undefined, 'eth_getLogs: HTTP 429', 429), error(-32000, 'header not found'), new Error('query returned more than 10000 results')];
    for (const e of others) expect(isLogLimitError(e), e.message).toBe(false);
    expect(suggestedRange(limits[2])).toEqual({ from: 1n, to: 2n });
  });

  it('falls back from `finalized` only when the node says the tag is unsupported', () => {
    expect(isUnsupportedTag(error(-32601, 'the method eth_getBlockByNumber does not exist/is not available'))).toBe(true);
    expect(isUnsupportedTag(error(-32602, 'invalid block tag finalized'))).toBe(true);
    expect(isUnsupportedTag(error(-32000, 'finalized block not found'))).toBe(false); // geth waiting for finality: no fallback
    expect(isUnsupportedTag(error(undefined, 'eth_getBlockByNumber: HTTP 429', 429))).toBe(false);
    expect(isUnsupportedTag(error(undefined, 'eth_getBlockByNumber: HTTP 503', 503))).toBe(false);
    expect(isUnsupportedTag(error(-32005, 'rate limit exceeded'))).toBe(false);
    expect(isUnsupportedTag(error(-32603, 'internal error'))).toBe(false);
    expect(isUnsupportedTag(new Error('fetch failed'))).toBe(false);
  });

  it('tells a finalized block that is missing from a tag that is unknown by what the answer means, not one wording (issue 33)', () => {
    const missing = [
      error(-32000, 'eth_getBlockByNumber: finalized block not found'), // geth
      error(-32000, 'eth_getBlockByNumber: unknown block'), // geth, other versions
      error(-32000, 'eth_getBlockByNumber: finalized block is not available'),
      error(-32602, 'eth_getBlockByNumber: finalized block not available'),
      error(-39001, 'eth_getBlockByNumber: Unknown block'),
      error(-32603, 'eth_getBlockByNumber: no finalized block yet'),
      error(-32000, 'eth_getBlockByNumber: Finalized block is unavailable'),
      error(-32000, 'eth_getBlockByNumber: block not yet finalized'),
      error(-32000, 'eth_getBlockByNumber: finalized block does not exist'),
    ];
    for (const e of missing) {
      expect(isFinalizedBlockMissing(e), e.message).toBe(true);
      expect(isUnsupportedTag(e), e.message).toBe(false);
    }
    const unsupported = [
      error(-32601, 'the method eth_getBlockByNumber does not exist/is not available'),
      error(-32602, 'eth_getBlockByNumber: invalid block tag finalized'),
      error(-32602, 'eth_getBlockByNumber: unknown block tag'),
      error(-32602, 'eth_getBlockByNumber: invalid argument 0: hex string without 0x prefix'), // geth before the tag
      error(-32000, 'eth_getBlockByNumber: block tag finalized is not supported'),
      error(-32602, 'eth_getBlockByNumber: invalid block number'),
    ];
    for (const e of unsupported) {
      expect(isUnsupportedTag(e), e.message).toBe(true);
      expect(isFinalizedBlockMissing(e), e.message).toBe(false);
    }
    for (const e of [error(-32005, 'rate limit exceeded'), error(undefined, 'eth_getBlockByNumber: HTTP 503', 503), new Error('fetch failed')]) {
      expect(isFinalizedBlockMissing(e), e.message).toBe(false);
      expect(isUnsupportedTag(e), e.message).toBe(false);
    }
  });
});
