// `*_FINALITY=finalized` against a geth that has no finalized block yet (-32000 "finalized block not
// found", until its consensus client reports finality): the scan waits, it never counts confirmations.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ChainScanner } from '../../../src/server/chain/scanner.js';
import { FinalityUnavailableError } from '../../../src/server/chain/rpc.js';
import { blockHash } from '../../support/fake-rpc.js';
import { freshDatabase } from '../../support/platform.js';
import type { Database } from '../../../src/server/db/database.js';
import { migrate } from '../../../src/server/db/migrate.js';

/** A node at head 1000 whose finalized block is `finalized`, or geth's -32000 answer while it has none. */
async function gethWaitingForFinality() {
  const node = { head: 1000n, finalized: undefined as bigint | undefined, missing: { code: -32000, message: 'finalized block not found' } };
  const answer = (method: string, params: unknown[]) => {
    if (method === 'eth_blockNumber') return { result: `0x${node.head.toString(16)}` };
    if (method === 'eth_getBlockByNumber' && params[0] === 'finalized') {
      return node.finalized === undefined ? { error: node.missing } : { result: { number: `0x${node.finalized.toString(16)}` } };
    }
    if (method === 'eth_getBlockByNumber') {
      const n = BigInt(params[0] as string);
      return { result: { number: params[0], hash: blockHash(n), parentHash: blockHash(n - 1n), timestamp: `0x${Math.floor(Date.now() / 1000).toString(16)}` } };
    }
    if (method === 'eth_getLogs') return { result: [] };
    return { error: { code: -32601, message: `method ${method} not found` } };
  };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk));
    request.on('end', () => {
      const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, ...answer(method, params) }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return Object.assign(node, {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}

describe('finality "finalized" while the node has no finalized block', () => {
  let node: Awaited<ReturnType<typeof gethWaitingForFinality>>;
  let database: { db: Database; drop: () => Promise<void> };

  beforeAll(async () => {
    node = await gethWaitingForFinality();
    database = await freshDatabase('pglite');
    await migrate(database.db);
  });
  afterAll(async () => {
    await node?.close();
    await database?.drop();
  });

  // geth's wording, and the other wordings of the same meaning (issue 33): all wait.
  it.each([
    { code: -32000, message: 'finalized block not found' },
    { code: -32000, message: 'unknown block' },
    { code: -32000, message: 'finalized block is not available' },
  ])('waits on $code "$message" (no progress, a warning) instead of falling back to confirmations, and goes on once finality is reported', async (missing) => {
    node.missing = missing;
    node.finalized = undefined;
    await database.db.query('DELETE FROM chain_cursors');
    const warnings: string[] = [];
    const scanner = new ChainScanner({
      network: 'Ethereum',
      chain: { rpcUrl: node.url, tokenContract: '0x' + 'ab'.repeat(20), pollIntervalSeconds: 1, maxBlockRange: 5000, maxAddressesPerQuery: 1000, startBlock: 900, finality: 'finalized' },
      confirmations: 12,
      watchWindowSeconds: 86_400,
      db: database.db,
      now: Date.now,
      log: { warn: (_obj, msg) => void warnings.push(msg), error: () => {} },
    });
    await expect(scanner.confirmedHead()).rejects.toBeInstanceOf(FinalityUnavailableError); // today's main: 989
    await expect(scanner.scanOnce()).rejects.toBeInstanceOf(FinalityUnavailableError);
    const scanPosition = async () => (await database.db.query<{ next_block: bigint }>("SELECT next_block FROM chain_cursors WHERE network = 'Ethereum'"))[0]!.next_block;
    expect(await scanPosition()).toBe(900n);

    scanner.start();
    await expect.poll(() => warnings.some((w) => w.includes('no finalized block yet')), { timeout: 5000 }).toBe(true);
    await scanner.stop();
    expect(await scanPosition()).toBe(900n);

    node.finalized = 950n;
    expect(await scanner.confirmedHead()).toBe(950n);
    expect(await scanner.scanOnce()).toMatchObject({ fromBlock: 900n, toBlock: 950n });
  });
});
