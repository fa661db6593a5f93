// The Tron payout job's client of a node's HTTP API (src/server/payouts/tron-node.ts), against the stand-in
// of java-tron's answers (test/support/tron-node.ts): blocks, a broadcast and its refusals, whether a
// transaction is known and its solidified info, the hot wallet's balances, Basic authentication from the
// URL, TronGrid's API key on every request, and errors that never repeat the URL or the key.
import { createServer, type Server } from 'node:net';
import type { AddressInfo } from 'node:net';
import { sha256 } from '@noble/hashes/sha2.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toTronAddress } from '../../../src/server/addresses/derivation.js';
import { HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { provesTransfer } from '../../../src/server/payouts/transfer-proof.js';
import { signTrc20Transfer, type SignedTronTransaction } from '../../../src/server/payouts/tron.js';
import { TronNode, TronNodeError } from '../../../src/server/payouts/tron-node.js';
import { startTronNode, type TronNode as StandIn } from '../../support/tron-node.js';

const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const wallet = new HotWallet('Tron', sha256(new TextEncoder().encode('the Tron node client test wallet')));
let standIn: StandIn;
let client: TronNode;
let destinations = 0;
const destination = () => toTronAddress(sha256(new TextEncoder().encode(`client destination ${++destinations}`)).subarray(0, 20));
/** The URL with a user and a password, as an operator may set TRON_API_URL. */
const credentialsUrl = () => standIn.url.replace('http://', 'http://payer:s3cret%2Fkey@');

beforeAll(async () => {
  standIn = await startTronNode({ token: USDT });
  standIn.produceBlocks(30);
  standIn.setTokenBalance(wallet.address, 500_000_000n);
  client = new TronNode(credentialsUrl());
});
afterAll(async () => {
  await standIn?.close();
});

async function transfer(amount: bigint, to = destination()): Promise<SignedTronTransaction> {
  const referenceBlock = await client.headBlock();
  return signTrc20Transfer(wallet, { referenceBlock, expiration: referenceBlock.timestamp + 60_000, feeLimit: 50_000_000, token: USDT, to, amount });
}

describe('the Tron node client', () => {
  it('reads the head and the solidified block, with the URL\'s user and password as Basic authentication', async () => {
    const calls = standIn.calls.length;
    expect(await client.headBlock()).toEqual({ number: standIn.head.number, hash: standIn.head.blockID, timestamp: standIn.head.timestamp });
    expect(await client.solidBlock()).toEqual({ number: standIn.solid.number, hash: standIn.solid.blockID, timestamp: standIn.solid.timestamp });
    const made = standIn.calls.slice(calls);
    expect(made.map((c) => c.path)).toEqual(['/wallet/getnowblock', '/walletsolidity/getnowblock']);
    for (const call of made) expect(call.authorization).toBe(`Basic ${Buffer.from('payer:s3cret/key').toString('base64')}`);
    const anonymous = new TronNode(standIn.url);
    await anonymous.headBlock();
    expect(standIn.calls.at(-1)!.authorization).toBeUndefined();
  });

  it("sends TRON_API_KEY as TronGrid's TRON-PRO-API-KEY header on every request; without it a node that asks for one answers 401, and the error names neither key nor URL", async () => {
    const key = 'c0ffee00-1234-4abc-8def-0123456789ab';
    const keyed = await startTronNode({ token: USDT, apiKey: key });
    try {
      keyed.produceBlocks(30);
      const withKey = new TronNode(keyed.url, { apiKey: key });
      const head = await withKey.headBlock();
      await withKey.solidBlock();
      expect(await withKey.whereKnown('00'.repeat(32))).toBeUndefined();
      expect(await withKey.trxBalance(wallet.address)).toBe(0n);
      expect(await withKey.tokenBalance(USDT, wallet.address)).toBe(0n);
      const tx = signTrc20Transfer(wallet, { referenceBlock: head, expiration: head.timestamp + 60_000, feeLimit: 50_000_000, token: USDT, to: destination(), amount: 1n });
      expect(await withKey.broadcast(tx)).toBe('sent');
      expect(keyed.calls).toHaveLength(9);
      for (const call of keyed.calls) expect(call).toMatchObject({ apiKey: key, authorization: undefined });

      const without = (await new TronNode(keyed.url).headBlock().catch((error: unknown) => error)) as Error;
      expect(without).toBeInstanceOf(TronNodeError);
      expect(without.message).toBe('/wallet/getnowblock: HTTP 401');
      expect(keyed.calls.at(-1)).toMatchObject({ path: '/wallet/getnowblock', apiKey: undefined });
      const wrong = (await new TronNode(keyed.url, { apiKey: 'not-the-key' }).headBlock().catch((error: unknown) => error)) as Error;
      expect(wrong.message).toBe('/wallet/getnowblock: HTTP 401');
      expect(wrong.message).not.toContain('not-the-key');
    } finally {
      await keyed.close();
    }
  });

  it("is refused with java-tron's BANDWITH_ERROR when the sender has neither bandwidth nor TRX to burn for it, and taken once it has the TRX", async () => {
    const poor = new HotWallet('Tron', sha256(new TextEncoder().encode('a wallet without bandwidth')));
    standIn.setTokenBalance(poor.address, 10_000_000n);
    standIn.setBandwidth(poor.address, 0);
    standIn.setTrxBalance(poor.address, 344_999n); // a transfer's 345 bytes burn 345,000 sun
    const referenceBlock = await client.headBlock();
    const tx = signTrc20Transfer(poor, { referenceBlock, expiration: referenceBlock.timestamp + 60_000, feeLimit: 50_000_000, token: USDT, to: destination(), amount: 1_000_000n });
    const refusal = await client.broadcast(tx).catch((error: unknown) => error);
    expect(refusal).toMatchObject({ code: 'BANDWITH_ERROR', message: 'broadcasttransaction refused: BANDWITH_ERROR: AccountResourceInsufficient error' });
    // As java-tron answers it with visible=false: api.Return with the message as hex of its text.
    expect(standIn.broadcasts.at(-1)).toEqual({ txID: tx.txID, answer: { code: 'BANDWITH_ERROR', txid: tx.txID, message: Buffer.from('AccountResourceInsufficient error').toString('hex') } });
    expect(standIn.pending()).not.toContain(tx.txID);
    standIn.setTrxBalance(poor.address, 345_000n);
    expect(await client.broadcast(tx)).toBe('sent');
    standIn.produceBlocks(1);
    // The bandwidth burnt its TRX; none was left for the energy: the call ran out of it in its block.
    expect(standIn.trxBalance(poor.address)).toBe(0n);
    standIn.produceBlocks(19);
    expect(await client.solidifiedInfo(tx.txID)).toMatchObject({ result: 'OUT_OF_ENERGY', failed: true });
  });

  it('broadcasts: taken, then known (DUP_TRANSACTION_ERROR is success); a refusal throws its code and its message decoded', async () => {
    const tx = await transfer(1_000_000n);
    expect(await client.broadcast(JSON.stringify(tx))).toBe('sent');
    expect(await client.broadcast(JSON.stringify(tx))).toBe('known');
    standIn.produceBlocks(1);
    expect(await client.broadcast(tx)).toBe('known');

    const other = await transfer(2_000_000n);
    const forged = { ...other, signature: [tx.signature[0]] as [string] };
    const refusal = await client.broadcast(forged).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(TronNodeError);
    expect(refusal).toMatchObject({ code: 'SIGERROR', message: expect.stringMatching(/^broadcasttransaction refused: SIGERROR: Validate signature error: [0-9a-f]{64} transaction signature validate failed$/) });
  });

  it('knows a transaction only in a block, and reads its info only once that block is solidified: the proof, or why it failed', async () => {
    const to = destination();
    const tx = await transfer(3_000_000n, to);
    await client.broadcast(tx);
    // Pending: none of java-tron's four transaction reads knows it, and each was asked.
    const calls = standIn.calls.length;
    expect(await client.whereKnown(tx.txID)).toBeUndefined();
    expect(standIn.calls.slice(calls).map((c) => c.path)).toEqual(['/wallet/gettransactionbyid', '/walletsolidity/gettransactionbyid', '/wallet/gettransactioninfobyid', '/walletsolidity/gettransactioninfobyid']);
    standIn.produceBlocks(1);
    expect(await client.whereKnown(tx.txID)).toBe('/wallet/gettransactionbyid');
    expect(await client.solidifiedInfo(tx.txID)).toBeUndefined();
    standIn.produceBlocks(19);
    const info = await client.solidifiedInfo(tx.txID);
    expect(info).toMatchObject({ blockNumber: standIn.head.number - 19, result: 'SUCCESS', failed: false, message: undefined });
    expect(provesTransfer('Tron', info!.logs, { token: USDT, from: wallet.address, to, amount: 3_000_000n })).toBe(true);

    standIn.revertNextBroadcast();
    const reverted = await transfer(4_000_000n);
    await client.broadcast(reverted);
    standIn.produceBlocks(20);
    expect(await client.solidifiedInfo(reverted.txID)).toEqual({ blockNumber: standIn.head.number - 19, result: 'REVERT', failed: true, message: 'REVERT opcode executed', logs: [] });
    expect(await client.solidifiedInfo('00'.repeat(32))).toBeUndefined();
  });

  it("asks every transaction read before it says none knows a transaction: the full node's backend may lag, the solidity node's differently", async () => {
    const tx = await transfer(1_500_000n);
    await client.broadcast(tx);
    standIn.produceBlocks(1);
    // The full node's reads come from a backend one block behind: it has not reached the block yet.
    standIn.lagWalletReads(1);
    expect(await client.whereKnown(tx.txID)).toBeUndefined();
    standIn.produceBlocks(1);
    expect(await client.whereKnown(tx.txID)).toBe('/wallet/gettransactionbyid');
    // Solidified, the full node's backend far behind: the solidity node's reads know it.
    standIn.produceBlocks(19);
    standIn.lagWalletReads(100);
    expect(await client.whereKnown(tx.txID)).toBe('/walletsolidity/gettransactionbyid');
    standIn.lagSolidityReads(100);
    expect(await client.whereKnown(tx.txID)).toBeUndefined();
    standIn.lagWalletReads(0);
    standIn.lagSolidityReads(0);
    expect(await client.whereKnown(tx.txID)).toBe('/wallet/gettransactionbyid');
  });

  it("reads the hot wallet's token balance (balanceOf) at the solidified block, and its TRX balance (0 for an account the chain does not have)", async () => {
    standIn.produceBlocks(20);
    expect(await client.tokenBalance(USDT, wallet.address)).toBe(standIn.tokenBalance(wallet.address));
    const fresh = destination();
    standIn.setTokenBalance(fresh, 5_000_000n);
    standIn.produceBlocks(19);
    expect(await client.tokenBalance(USDT, fresh)).toBe(0n); // not solidified yet
    standIn.produceBlocks(1);
    expect(await client.tokenBalance(USDT, fresh)).toBe(5_000_000n);
    expect(await client.trxBalance(fresh)).toBe(0n);
    standIn.setTrxBalance(fresh, 0n);
    expect(await client.trxBalance(fresh)).toBe(0n);
    standIn.setTrxBalance(fresh, 123_000_000n);
    expect(await client.trxBalance(fresh)).toBe(123_000_000n);
    await expect(client.tokenBalance(destination(), wallet.address)).rejects.toThrow(/CONTRACT_VALIDATE_ERROR: No contract or not a smart contract/);
  });

  it('fails with the path and why, never the URL: a node that is down, one that never answers', async () => {
    standIn.setDown(true);
    const down = (await client.headBlock().catch((error: unknown) => error)) as Error;
    standIn.setDown(false);
    expect(down).toBeInstanceOf(TronNodeError);
    expect(down.message).toMatch(/^\/wallet\/getnowblock: connection failed/);
    const port = new URL(standIn.url).port;
    for (const secret of ['s3cret', 'payer', port, '127.0.0.1']) expect(down.message).not.toContain(secret);

    const silent: Server = createServer(() => {}); // takes the connection, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const url = `http://payer:s3cret@127.0.0.1:${(silent.address() as AddressInfo).port}`;
      const slow = (await new TronNode(url, { timeoutMs: 200 }).solidifiedInfo('00'.repeat(32)).catch((error: unknown) => error)) as Error;
      expect(slow.message).toBe('/walletsolidity/gettransactioninfobyid: no answer within 200 ms');
    } finally {
      silent.close();
    }
  });
});
