// The local-chain test kit itself (test/support/chain.ts): anvil, the test USDT, blocks and reorgs.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tronAddressToId } from '../../../src/server/addresses/derivation.js';
import { addressTopic, startChain, TRANSFER_TOPIC, type Chain, type Hex, type Log, type Token } from '../../support/chain.js';

// A deposit address the platform might derive: any 20 bytes, not one of anvil's accounts.
const DEPOSIT: Hex = '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c';
// The 20-byte id inside the Tron address TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH (tronAddressToId).
const TRON_DEPOSIT_ID: Hex = '0xc8599111f29c1e1e061265b4af93ea1f274ad78a';

describe('local chain kit', () => {
  let chain: Chain;
  let token: Token;

  beforeAll(async () => {
    chain = await startChain();
    token = await chain.deployToken();
  });

  afterAll(async () => {
    await chain?.stop();
  });

  it('runs anvil with the default funded accounts on chain 31337', async () => {
    expect(chain.rpcUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await chain.rpc('eth_chainId')).toBe('0x7a69');
    expect(chain.accounts).toHaveLength(10);
    expect(chain.accounts[0]).toBe('0xf39fd6e51aad88f6f4ce6ab8827279cfffb92266');
    expect(BigInt(await chain.rpc<string>('eth_getBalance', [chain.accounts[1], 'latest']))).toBeGreaterThan(0n);
    expect(TRANSFER_TOPIC).toBe('0xddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef');
  });

  it('deploys a 6-decimal USDT holding the supply in accounts[0]', async () => {
    expect(token.address).toMatch(/^0x[0-9a-f]{40}$/);
    expect(await token.balanceOf(chain.accounts[0]!)).toBe(10n ** 15n);
    const call = (data: string) => chain.rpc<string>('eth_call', [{ to: token.address, data }, 'latest']);
    expect(BigInt(await call('0x313ce567'))).toBe(6n); // decimals()
    const symbol = await call('0x95d89b41'); // symbol(): offset, length, bytes
    expect(Buffer.from(symbol.slice(2 + 128, 2 + 128 + 8), 'hex').toString()).toBe('USDT');
  });

  it('puts two transfers to one address in one block, log indexes in send order', async () => {
    await token.distribute([chain.accounts[1]!, chain.accounts[2]!], 10_000_000n);
    await chain.setAutomine(false);
    let hashes: Hex[];
    try {
      hashes = [await token.transfer(chain.accounts[1]!, DEPOSIT, 1_500_000n), await token.transfer(chain.accounts[2]!, DEPOSIT, 2_500_000n)];
      expect(await chain.rpc('eth_getTransactionReceipt', [hashes[0]])).toBeNull();
      await chain.mine(1);
    } finally {
      await chain.setAutomine(true);
    }
    const head = await chain.blockNumber();
    const logs = await chain.getLogs({ address: token.address, topics: [TRANSFER_TOPIC, null, addressTopic(DEPOSIT)], fromBlock: 0n, toBlock: head });
    expect(logs).toHaveLength(2);
    expect(logs.map((l) => l.transactionHash)).toEqual(hashes);
    expect(new Set(logs.map((l) => l.blockHash)).size).toBe(1);
    expect(logs.map((l) => BigInt(l.blockNumber))).toEqual([head, head]);
    expect(logs.map((l) => l.logIndex)).toEqual(['0x0', '0x1']);
    expect(logs.map((l) => BigInt(l.data))).toEqual([1_500_000n, 2_500_000n]);
    expect(logs.map((l) => l.topics[1])).toEqual([addressTopic(chain.accounts[1]!), addressTopic(chain.accounts[2]!)]);
    expect(logs.every((l) => l.removed === false && l.address === token.address)).toBe(true);
    expect(await token.balanceOf(DEPOSIT)).toBe(4_000_000n);
    expect(await token.balanceOf(chain.accounts[1]!)).toBe(8_500_000n);
  });

  it('emits several logs from one transaction with transferBatch', async () => {
    const hash = await token.transferBatch(chain.accounts[0]!, [
      { to: TRON_DEPOSIT_ID, amount: 1_500_000n },
      { to: TRON_DEPOSIT_ID, amount: 2_500_000n },
    ]);
    const receipt = await chain.waitForReceipt(hash);
    expect(receipt.status).toBe('0x1');
    const logs = await chain.getLogs({ address: token.address, topics: [TRANSFER_TOPIC, null, addressTopic(TRON_DEPOSIT_ID)], blockHash: receipt.blockHash });
    expect(logs.map((l) => [l.transactionHash, l.logIndex, BigInt(l.data)])).toEqual([
      [hash, '0x0', 1_500_000n],
      [hash, '0x1', 2_500_000n],
    ]);
  });

  it('rejects a transfer beyond the balance', async () => {
    await expect(token.transfer(chain.accounts[3]!, DEPOSIT, 1n)).rejects.toThrow(/revert|balance/i);
  });

  it('reverts to a snapshot: the transfer and its log are gone', async () => {
    const before = await chain.blockNumber();
    const balance = await token.balanceOf(DEPOSIT);
    const id = await chain.snapshot();
    const hash = await token.transfer(chain.accounts[1]!, DEPOSIT, 700_000n);
    const receipt = await chain.waitForReceipt(hash);
    const filter = { address: token.address, topics: [TRANSFER_TOPIC, null, addressTopic(DEPOSIT)], fromBlock: 0n, toBlock: 'latest' };
    expect((await chain.getLogs(filter)).map((l) => l.transactionHash)).toContain(hash);

    await chain.revert(id);
    expect(await chain.blockNumber()).toBe(before);
    expect((await chain.getLogs(filter)).map((l) => l.transactionHash)).not.toContain(hash);
    expect(await chain.rpc('eth_getTransactionReceipt', [hash])).toBeNull();
    expect(await token.balanceOf(DEPOSIT)).toBe(balance);

    // A new block at the same height is a different block: what a scanner sees after a reorg.
    await chain.mine(1);
    const replaced = await chain.rpc<{ hash: Hex }>('eth_getBlockByNumber', [receipt.blockNumber, false]);
    expect(replaced.hash).not.toBe(receipt.blockHash);
  });

  it('mines empty blocks and moves time', async () => {
    const before = await chain.blockNumber();
    const last = await chain.rpc<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
    await chain.increaseTime(3600);
    await chain.mine(3);
    expect(await chain.blockNumber()).toBe(before + 3n);
    const now = await chain.rpc<{ timestamp: Hex }>('eth_getBlockByNumber', ['latest', false]);
    expect(BigInt(now.timestamp) - BigInt(last.timestamp)).toBeGreaterThanOrEqual(3600n);
  });
});

describe('Tron JSON-RPC fixtures (test/fixtures/tron)', () => {
  const fixture = <T>(name: string): T =>
    JSON.parse(readFileSync(new URL(`../../fixtures/tron/${name}`, import.meta.url), 'utf8')) as T;
  const logs = fixture<{ result: Log[] }>('eth_getLogs.json').result;
  const block = fixture<{ result: { number: Hex; hash: Hex; transactions: Hex[] } }>('eth_getBlockByNumber.json').result;
  const head = BigInt(fixture<{ result: Hex }>('eth_blockNumber.json').result);
  const deposits = ['TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH', 'TSeJkUh4Qv67VNFwY8LaAxERygNdy6NQZK'].map(
    (address) => `0x${Buffer.from(tronAddressToId(address)).toString('hex')}`,
  );

  it('are USDT Transfer logs to the two deposit addresses, as 20-byte ids', () => {
    expect(`0x${Buffer.from(tronAddressToId('TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t')).toString('hex')}`).toBe('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c');
    expect(logs).toHaveLength(4);
    for (const log of logs) {
      expect(log.address).toBe('0xa614f803b6fd780986a42c78ec9c7f77e6ded13c');
      expect(log.topics[0]).toBe(TRANSFER_TOPIC);
      expect(deposits.map(addressTopic)).toContain(log.topics[2]);
      expect(log.removed).toBe(false);
      // Tron's block id starts with the block number.
      expect(BigInt(log.blockHash.slice(0, 18))).toBe(BigInt(log.blockNumber));
      expect(BigInt(log.blockNumber)).toBeLessThanOrEqual(head);
    }
    expect(logs.map((l) => BigInt(l.data))).toEqual([1_500_000n, 2_500_000n, 1_500_000n, 2_500_000n]);
    expect(logs[2]!.transactionHash).toBe(logs[3]!.transactionHash);
    expect(new Set(logs.map((l) => `${l.blockHash}/${l.logIndex}`)).size).toBe(4);
  });

  it('agree with the block they point at', () => {
    const inBlock = logs.filter((l) => l.blockHash === block.hash);
    expect(inBlock).toHaveLength(2);
    for (const log of inBlock) expect(block.transactions[Number(log.transactionIndex)]).toBe(log.transactionHash);
  });
});
