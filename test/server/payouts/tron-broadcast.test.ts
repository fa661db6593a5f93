// Tron payouts against the stand-in of a node's HTTP API (test/support/tron-node.ts): broadcast, the
// answers to the same bytes sent again, expiry and the safe rebuild, lost requests and answers, reverts,
// a node that is down, and the proof read from gettransactioninfobyid; the accounts' TRX and the token's
// balanceOf as tronweb reads them. The stand-in verifies what java-tron verifies, with tronweb's protobuf
// and recovery.
import { sha256 } from '@noble/hashes/sha2.js';
import { TronWeb } from 'tronweb';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { toTronAddress } from '../../../src/server/addresses/derivation.js';
import { HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { referenceBlockOf, signTrc20Transfer, type SignedTronTransaction } from '../../../src/server/payouts/tron.js';
import { provesTransfer } from '../../../src/server/payouts/transfer-proof.js';
import { startTronNode, TRANSFER_ENERGY, type TronNode } from '../../support/tron-node.js';

const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const FEE_LIMIT = 50_000_000; // 50 TRX
const wallet = new HotWallet('Tron', sha256(new TextEncoder().encode('the Tron broadcast test wallet')));
let node: TronNode;
let destinations = 0;
const destination = () => toTronAddress(sha256(new TextEncoder().encode(`destination ${++destinations}`)).subarray(0, 20));

beforeAll(async () => {
  node = await startTronNode({ token: USDT });
  node.produceBlocks(30);
});
afterAll(async () => {
  await node?.close();
});
beforeEach(() => {
  node.setTokenBalance(wallet.address, 1_000_000_000n);
});

type Json = Record<string, unknown>;

async function post(path: string, body: unknown = {}): Promise<Json> {
  const response = await fetch(`${node.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  expect(response.status).toBe(200);
  return (await response.json()) as Json;
}

/** A transfer whose reference block is the node's head now, valid for `lifetimeMs`. */
async function transfer(to: string, amount: bigint, { lifetimeMs = 60_000, feeLimit = FEE_LIMIT } = {}): Promise<SignedTronTransaction> {
  const referenceBlock = referenceBlockOf(await post('/wallet/getnowblock'));
  return signTrc20Transfer(wallet, { referenceBlock, expiration: referenceBlock.timestamp + lifetimeMs, feeLimit, token: USDT, to, amount });
}

const broadcast = (tx: object) => post('/wallet/broadcasttransaction', tx);
const info = (txID: string, solid = false) => post(`/${solid ? 'walletsolidity' : 'wallet'}/gettransactioninfobyid`, { value: txID });
const byId = (txID: string, solid = false) => post(`/${solid ? 'walletsolidity' : 'wallet'}/gettransactionbyid`, { value: txID });
const text = (hex: unknown) => Buffer.from(String(hex), 'hex').toString('utf8');

function refused(answer: Json, code: string, message: string | RegExp, txid?: string): void {
  expect(answer.result).toBeUndefined(); // proto3 leaves result=false out
  expect(answer.code).toBe(code);
  expect(text(answer.message)).toMatch(message);
  if (txid) expect(answer.txid).toBe(txid);
}

describe('the stand-in Tron node', () => {
  it('answers getnowblock as java-tron does, the solidified block 19 blocks behind', async () => {
    const head = await post('/wallet/getnowblock');
    const solid = await post('/walletsolidity/getnowblock');
    const number = (block: Json) => (block.block_header as { raw_data: { number: number } }).raw_data.number;
    const time = (block: Json) => (block.block_header as { raw_data: { timestamp: number } }).raw_data.timestamp;
    expect(number(head) - number(solid)).toBe(19);
    expect(time(head) - time(solid)).toBe(19 * 3_000);
    expect(head.blockID).toMatch(new RegExp(`^${number(head).toString(16).padStart(16, '0')}[0-9a-f]{48}$`));
    expect(head).toMatchObject({ block_header: { raw_data: { parentHash: expect.stringMatching(/^[0-9a-f]{64}$/), witness_address: expect.stringMatching(/^41/) } } });
    expect(referenceBlockOf(head)).toEqual({ number: node.head.number, hash: node.head.blockID, timestamp: node.head.timestamp });
  });

  it('lets tronweb build the same transfer from its own reading of the head block (wallet/getblock) as we build from getnowblock', async () => {
    const to = destination();
    const tronWeb = new TronWeb({ fullHost: node.url });
    const { transaction } = await tronWeb.transactionBuilder.triggerSmartContract(
      USDT,
      'transfer(address,uint256)',
      { txLocal: true, feeLimit: FEE_LIMIT } as never,
      [
        { type: 'address', value: to },
        { type: 'uint256', value: '2500000' },
      ],
      wallet.address,
    );
    const ours = await transfer(to, 2_500_000n); // tronweb's expiration is the block's time + 60 s, as ours here
    expect(ours.raw_data_hex).toBe(transaction.raw_data_hex);
    expect(ours.txID).toBe(transaction.txID);
  });
});

describe('a TRC-20 payout broadcast to the node', () => {
  it('is accepted under its txID, mined at the next block, proven by its info, and solidified 19 blocks later', async () => {
    const to = destination();
    const tx = await transfer(to, 1_500_000n);
    expect(await broadcast(tx)).toEqual({ result: true, txid: tx.txID });
    expect(node.pending()).toEqual([tx.txID]);
    // Pending: the node does not know it by id yet.
    expect(await byId(tx.txID)).toEqual({});
    expect(await info(tx.txID)).toEqual({});

    node.produceBlocks(1);
    const mined = await byId(tx.txID);
    expect(mined).toMatchObject({ ret: [{ contractRet: 'SUCCESS' }], txID: tx.txID, raw_data_hex: tx.raw_data_hex, signature: tx.signature, raw_data: tx.raw_data });
    const receipt = await info(tx.txID);
    expect(receipt).toMatchObject({
      id: tx.txID,
      blockNumber: node.head.number,
      blockTimeStamp: node.head.timestamp,
      receipt: { result: 'SUCCESS', energy_usage_total: TRANSFER_ENERGY.toNewHolder },
    });
    expect(receipt.result).toBeUndefined(); // SUCESS (sic) is the default and left out
    const logs = receipt.log as { address: string; topics: string[]; data: string }[];
    expect(provesTransfer('Tron', logs, { token: USDT, from: wallet.address, to, amount: 1_500_000n })).toBe(true);
    expect(provesTransfer('Tron', logs, { token: USDT, from: wallet.address, to, amount: 1_500_001n })).toBe(false);
    expect(node.tokenBalance(to)).toBe(1_500_000n);
    expect(node.tokenBalance(wallet.address)).toBe(1_000_000_000n - 1_500_000n);

    // Not solidified yet: the solidity API does not know it.
    expect(await info(tx.txID, true)).toEqual({});
    expect(await byId(tx.txID, true)).toEqual({});
    node.produceBlocks(18);
    expect(await info(tx.txID, true)).toEqual({});
    node.produceBlocks(1);
    expect(await info(tx.txID, true)).toEqual(receipt);
    expect(await byId(tx.txID, true)).toEqual(mined);
  });

  it('answers the same bytes sent again with DUP_TRANSACTION_ERROR, pending or mined, and pays once', async () => {
    const to = destination();
    const tx = await transfer(to, 3_000_000n);
    expect(await broadcast(tx)).toEqual({ result: true, txid: tx.txID });
    refused(await broadcast(tx), 'DUP_TRANSACTION_ERROR', 'Transaction already exists.', tx.txID);
    node.produceBlocks(1);
    refused(await broadcast(tx), 'DUP_TRANSACTION_ERROR', /^(Transaction already exists\.|Dup transaction\.)$/, tx.txID);
    node.produceBlocks(3);
    expect(node.tokenBalance(to)).toBe(3_000_000n);
  });

  it('writes the message of a refusal as text with visible=true, as hex of it without', async () => {
    const tx = await transfer(destination(), 1n);
    await broadcast(tx);
    const hex = await broadcast(tx);
    expect(hex.message).toBe(Buffer.from('Transaction already exists.').toString('hex'));
    expect((await broadcast({ ...tx, visible: true })).message).toBe('Transaction already exists.');
    node.produceBlocks(1);
  });

  it('refuses an expired transfer; one that expires while pending is dropped, and a rebuild is safe once the solidified block is past its expiration', async () => {
    const to = destination();
    const late = await transfer(to, 1n, { lifetimeMs: 6_000 });
    node.produceBlocks(2, { include: false });
    refused(await broadcast(late), 'TRANSACTION_EXPIRATION_ERROR', 'Transaction expired', late.txID);

    const first = await transfer(to, 4_000_000n, { lifetimeMs: 9_000 });
    expect(await broadcast(first)).toMatchObject({ result: true });
    node.produceBlocks(4, { include: false }); // congested: not packed before it expires
    node.produceBlocks(1);
    expect(node.pending()).toEqual([]);
    expect(await info(first.txID)).toEqual({});
    // The rule: rebuild only when the solidified block's time is past the expiration and the node does not know the txID.
    const expiration = first.raw_data.expiration;
    while (node.solid.timestamp <= expiration) node.produceBlocks(1);
    expect(await info(first.txID, true)).toEqual({});
    expect(await byId(first.txID)).toEqual({});
    const rebuilt = await transfer(to, 4_000_000n);
    expect(rebuilt.txID).not.toBe(first.txID);
    expect(await broadcast(rebuilt)).toEqual({ result: true, txid: rebuilt.txID });
    node.produceBlocks(1);
    expect((await info(rebuilt.txID)).receipt).toMatchObject({ result: 'SUCCESS' });
    // The first can never come back: too late for any node.
    refused(await broadcast(first), 'DUP_TRANSACTION_ERROR', 'Transaction already exists.');
    expect(node.tokenBalance(to)).toBe(4_000_000n);
  });

  it('refuses a transfer that expires more than 24 hours after the head block (built by tronweb: our builder will not)', async () => {
    const key = sha256(new TextEncoder().encode('a tronweb signer'));
    const tronWeb = new TronWeb({ fullHost: node.url });
    const owner = new HotWallet('Tron', key).address;
    const head = node.head;
    const { transaction } = await tronWeb.transactionBuilder.triggerSmartContract(
      USDT,
      'transfer(address,uint256)',
      {
        txLocal: true,
        feeLimit: FEE_LIMIT,
        blockHeader: { ref_block_bytes: (head.number & 0xffff).toString(16).padStart(4, '0'), ref_block_hash: head.blockID.slice(16, 32), expiration: head.timestamp + 24 * 3_600_000 + 3_000, timestamp: head.timestamp },
      } as never,
      [
        { type: 'address', value: destination() },
        { type: 'uint256', value: '1' },
      ],
      owner,
    );
    const signed = await tronWeb.trx.sign(transaction, Buffer.from(key).toString('hex'));
    refused(await broadcast(signed), 'TRANSACTION_EXPIRATION_ERROR', 'Transaction expired', transaction.txID);
  });

  it('refuses a signature by another key, of other bytes, or of the wrong size (SIGERROR)', async () => {
    const tx = await transfer(destination(), 5n);
    const stranger = new HotWallet('Tron', sha256(new TextEncoder().encode('not the hot wallet')));
    const { r, s: sValue, recovery } = stranger.signDigest(Buffer.from(tx.txID, 'hex'));
    const forged = { ...tx, signature: [Buffer.concat([r, sValue, Uint8Array.of(27 + recovery)]).toString('hex')] };
    refused(await broadcast(forged), 'SIGERROR', /^Validate signature error: .* transaction signature validate failed$/, tx.txID);
    // Another amount in raw_data under the first one's signature: the node hashes raw_data, not what we say.
    const value = tx.raw_data.contract[0].parameter.value;
    const tampered = {
      raw_data: { ...tx.raw_data, contract: [{ ...tx.raw_data.contract[0], parameter: { ...tx.raw_data.contract[0].parameter, value: { ...value, data: value.data.slice(0, -2) + 'ff' } } }] },
      signature: tx.signature,
    };
    refused(await broadcast(tampered), 'SIGERROR', /signature validate failed/);
    refused(await broadcast({ ...tx, signature: [tx.signature[0].slice(0, 128)] }), 'SIGERROR', 'Validate signature error: Signature size is 64');
    // Nothing was taken: the genuine one still goes through.
    expect(await broadcast(tx)).toEqual({ result: true, txid: tx.txID });
    node.produceBlocks(1);
  });

  it('refuses a reference to a block it does not have (TAPOS_ERROR), and says when raw_data_hex or txID do not match raw_data', async () => {
    const head = referenceBlockOf(await post('/wallet/getnowblock'));
    const foreign = { ...head, hash: head.hash.slice(0, 16) + 'f'.repeat(48) };
    const tx = signTrc20Transfer(wallet, { referenceBlock: foreign, expiration: head.timestamp + 60_000, feeLimit: FEE_LIMIT, token: USDT, to: destination(), amount: 1n });
    refused(await broadcast(tx), 'TAPOS_ERROR', 'Tapos check error.', tx.txID);
    const good = await transfer(destination(), 1n);
    expect((await broadcast({ ...good, raw_data_hex: good.raw_data_hex.slice(0, -2) + '00' })).Error).toMatch(/^stand-in check: raw_data_hex is not the protobuf of raw_data/);
    expect((await broadcast({ ...good, txID: '00'.repeat(32) })).Error).toMatch(/^stand-in check: txID is not sha256\(raw_data\)/);
    const response = await fetch(`${node.url}/wallet/broadcasttransaction`, { method: 'POST', body: '{"raw_data": ' });
    expect(((await response.json()) as Json).Error).toMatch(/^class com\.alibaba\.fastjson\.JSONException : /);
    expect(await broadcast({ raw_data: { contract: [] }, signature: [] })).toMatchObject({ Error: expect.stringMatching(/^class java\.lang\.NullPointerException/) });
  });

  it('loses a request: the client sees the connection fail, the node knows nothing, and the same bytes sent again are mined once', async () => {
    const to = destination();
    const tx = await transfer(to, 6_000_000n);
    node.loseNextBroadcast('request');
    await expect(broadcast(tx)).rejects.toThrow();
    expect(node.pending()).toEqual([]);
    expect(await broadcast(tx)).toEqual({ result: true, txid: tx.txID });
    node.produceBlocks(1);
    expect(node.tokenBalance(to)).toBe(6_000_000n);
  });

  it("loses an answer: the client sees the connection fail, yet the node took the transfer; sent again it answers DUP, and it is mined once", async () => {
    const to = destination();
    const tx = await transfer(to, 7_000_000n);
    node.loseNextBroadcast('answer');
    await expect(broadcast(tx)).rejects.toThrow();
    expect(node.pending()).toEqual([tx.txID]);
    refused(await broadcast(tx), 'DUP_TRANSACTION_ERROR', 'Transaction already exists.', tx.txID);
    node.produceBlocks(1);
    expect((await info(tx.txID)).receipt).toMatchObject({ result: 'SUCCESS' });
    expect(node.tokenBalance(to)).toBe(7_000_000n);
  });

  it('drops an accepted transfer: DUP when sent again, never mined; after expiry a rebuild pays once', async () => {
    const to = destination();
    const tx = await transfer(to, 8_000_000n, { lifetimeMs: 30_000 });
    node.loseNextBroadcast('dropped');
    expect(await broadcast(tx)).toEqual({ result: true, txid: tx.txID });
    refused(await broadcast(tx), 'DUP_TRANSACTION_ERROR', 'Transaction already exists.', tx.txID);
    node.produceBlocks(5);
    expect(await info(tx.txID)).toEqual({});
    while (node.solid.timestamp <= tx.raw_data.expiration) node.produceBlocks(1);
    expect(await info(tx.txID, true)).toEqual({});
    const rebuilt = await transfer(to, 8_000_000n);
    expect(await broadcast(rebuilt)).toEqual({ result: true, txid: rebuilt.txID });
    node.produceBlocks(1);
    expect(node.tokenBalance(to)).toBe(8_000_000n);
  });

  it('mines a reverted transfer: FAILED with REVERT, no Transfer log, no proof, nothing moved', async () => {
    const to = destination();
    const tx = await transfer(to, 9_000_000n);
    node.revertNextBroadcast();
    expect(await broadcast(tx)).toMatchObject({ result: true });
    node.produceBlocks(1);
    const receipt = await info(tx.txID);
    expect(receipt).toMatchObject({ id: tx.txID, result: 'FAILED', receipt: { result: 'REVERT' } });
    expect(text(receipt.resMessage)).toBe('REVERT opcode executed');
    expect(receipt.log).toBeUndefined();
    expect(provesTransfer('Tron', [], { token: USDT, from: wallet.address, to, amount: 9_000_000n })).toBe(false);
    expect(await byId(tx.txID)).toMatchObject({ ret: [{ contractRet: 'REVERT' }] });
    expect(node.tokenBalance(to)).toBe(0n);

    // One the hot wallet cannot cover reverts too, and so does one marked after its broadcast.
    node.setTokenBalance(wallet.address, 5n);
    const tooMuch = await transfer(destination(), 6n);
    const marked = await transfer(destination(), 1n);
    await broadcast(tooMuch);
    await broadcast(marked);
    node.revertTransaction(marked.txID);
    node.produceBlocks(1);
    expect((await info(tooMuch.txID)).receipt).toMatchObject({ result: 'REVERT' });
    expect((await info(marked.txID)).receipt).toMatchObject({ result: 'REVERT' });
    expect(node.tokenBalance(wallet.address)).toBe(5n);
  });

  it('burns the fee limit and moves nothing when the limit cannot pay the energy (OUT_OF_ENERGY)', async () => {
    const to = destination();
    const tx = await transfer(to, 1_000_000n, { feeLimit: 1_000_000 });
    expect(await broadcast(tx)).toMatchObject({ result: true });
    node.produceBlocks(1);
    const receipt = await info(tx.txID);
    expect(receipt).toMatchObject({ result: 'FAILED', receipt: { result: 'OUT_OF_ENERGY' } });
    expect(receipt.fee as number).toBeLessThanOrEqual(1_000_000);
    expect(node.tokenBalance(to)).toBe(0n);
  });

  it('goes down and comes back: every request fails while it is down', async () => {
    node.setDown(true);
    await expect(post('/wallet/getnowblock')).rejects.toThrow();
    const tx = signTrc20Transfer(wallet, { referenceBlock: { number: node.head.number, hash: node.head.blockID, timestamp: node.head.timestamp }, expiration: node.head.timestamp + 60_000, feeLimit: FEE_LIMIT, token: USDT, to: destination(), amount: 1n });
    await expect(broadcast(tx)).rejects.toThrow();
    node.setDown(false);
    expect(await broadcast(tx)).toEqual({ result: true, txid: tx.txID });
    node.produceBlocks(1);
  });
});

describe("the stand-in's accounts and constant calls, read by tronweb as it reads a java-tron node", () => {
  // An account of its own: its TRX balance is modelled from here on, which the tests above do without.
  const payer = new HotWallet('Tron', sha256(new TextEncoder().encode('the Tron TRX-paying wallet')));
  const tronWeb = () => new TronWeb({ fullHost: node.url });

  async function payerTransfer(to: string, amount: bigint, feeLimit = FEE_LIMIT): Promise<SignedTronTransaction> {
    const referenceBlock = referenceBlockOf(await post('/wallet/getnowblock'));
    return signTrc20Transfer(payer, { referenceBlock, expiration: referenceBlock.timestamp + 60_000, feeLimit, token: USDT, to, amount });
  }

  it("answers balanceOf through triggerconstantcontract (constant_result) and the TRX balance through getaccount", async () => {
    node.setTokenBalance(payer.address, 123_456_789n);
    const { constant_result, result, transaction } = (await tronWeb().transactionBuilder.triggerConstantContract(USDT, 'balanceOf(address)', {}, [{ type: 'address', value: payer.address }], payer.address)) as unknown as {
      constant_result: string[];
      result: Json;
      transaction: { txID: string; raw_data_hex: string; ret: unknown[] };
    };
    expect(result).toEqual({ result: true });
    expect(BigInt(`0x${constant_result[0]}`)).toBe(123_456_789n);
    expect(transaction.ret).toEqual([{}]);
    expect(transaction.txID).toBe(Buffer.from(sha256(Buffer.from(transaction.raw_data_hex, 'hex'))).toString('hex'));
    // The solidity API's balanceOf (tronweb's triggerConfirmedConstantContract) sees it once the next block is solidified.
    const confirmed = async () => {
      const answer = (await tronWeb().transactionBuilder.triggerConfirmedConstantContract(USDT, 'balanceOf(address)', {}, [{ type: 'address', value: payer.address }], payer.address)) as unknown as { constant_result: string[] };
      return BigInt(`0x${answer.constant_result[0]}`);
    };
    expect(await confirmed()).toBe(0n);
    node.produceBlocks(19);
    expect(await confirmed()).toBe(0n);
    node.produceBlocks(1);
    expect(await confirmed()).toBe(123_456_789n);
    // A holder of nothing: a zero word.
    const none = await post('/wallet/triggerconstantcontract', { owner_address: TronWeb.address.toHex(payer.address), contract_address: TronWeb.address.toHex(USDT), function_selector: 'balanceOf(address)', parameter: '0'.repeat(64) });
    expect(none.constant_result).toEqual(['0'.repeat(64)]);

    // Not activated: getaccount answers {} (tronweb's getUnconfirmedAccount reads /wallet/getaccount).
    expect(await post('/wallet/getaccount', { address: TronWeb.address.toHex(payer.address) })).toEqual({});
    expect(await tronWeb().trx.getUnconfirmedAccount(payer.address)).toEqual({});
    node.setTrxBalance(payer.address, 0n);
    const empty = await post('/wallet/getaccount', { address: TronWeb.address.toHex(payer.address) });
    expect(empty.address).toBe(TronWeb.address.toHex(payer.address).toLowerCase());
    expect(empty.balance).toBeUndefined(); // proto3 leaves a zero out
    node.setTrxBalance(payer.address, 250_000_000n);
    expect((await tronWeb().trx.getUnconfirmedAccount(payer.address)).balance).toBe(250_000_000);
    expect(await post('/wallet/getaccount', { address: payer.address, visible: true })).toMatchObject({ address: payer.address, balance: 250_000_000 });
  });

  it('refuses another contract (CONTRACT_VALIDATE_ERROR), reverts another function, and names a missing field', async () => {
    const other = toTronAddress(sha256(new TextEncoder().encode('not the token')).subarray(0, 20));
    await expect(tronWeb().transactionBuilder.triggerConstantContract(other, 'balanceOf(address)', {}, [{ type: 'address', value: payer.address }], payer.address)).rejects.toThrow(
      'No contract or not a smart contract',
    );
    const reverted = await post('/wallet/triggerconstantcontract', { owner_address: TronWeb.address.toHex(payer.address), contract_address: TronWeb.address.toHex(USDT), function_selector: 'totalSupply()' });
    expect(reverted).toMatchObject({ result: { result: true }, transaction: { ret: [{ ret: 'FAILED' }] } });
    expect(text((reverted.result as Json).message)).toBe('REVERT opcode executed');
    const missing = await post('/wallet/triggerconstantcontract', { contract_address: TronWeb.address.toHex(USDT), function_selector: 'balanceOf(address)' });
    expect(missing.result).toMatchObject({ code: 'OTHER_ERROR' });
    expect(text((missing.result as Json).message)).toMatch(/owner_address isn't set/);
  });

  it('burns the energy fee from the TRX of an account that has some, and runs out of energy when its TRX buys less than it needs', async () => {
    node.setTokenBalance(payer.address, 100_000_000n);
    node.setTrxBalance(payer.address, 100_000_000n);
    const to = destination();
    const paid = await payerTransfer(to, 10_000_000n);
    expect(await broadcast(paid)).toMatchObject({ result: true });
    node.produceBlocks(1);
    const energyFee = TRANSFER_ENERGY.toNewHolder * 210;
    expect((await info(paid.txID)).receipt).toMatchObject({ result: 'SUCCESS', energy_fee: energyFee });
    expect(node.trxBalance(payer.address)).toBe(100_000_000n - BigInt(energyFee));

    // 1 TRX buys 4,761 energy: the call stops there, its TRX burnt, no token moved.
    node.setTrxBalance(payer.address, 1_000_000n);
    const starved = await payerTransfer(destination(), 10_000_000n);
    expect(await broadcast(starved)).toMatchObject({ result: true });
    node.produceBlocks(1);
    expect(await info(starved.txID)).toMatchObject({ result: 'FAILED', receipt: { result: 'OUT_OF_ENERGY', energy_usage_total: 4_761 } });
    expect(node.trxBalance(payer.address)).toBe(1_000_000n - 4_761n * 210n);
    expect(node.tokenBalance(payer.address)).toBe(90_000_000n);
  });
});
