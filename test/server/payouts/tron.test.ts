// Tron payouts built and signed offline, checked against an independent implementation: tronweb's own
// transaction builder (its local path, txLocal), its JSON-to-protobuf encoder (what a node does with
// raw_data), its protobuf decoder, its signer and its recovery. The same bytes, the same txID, the same
// signature.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import fc from 'fast-check';
import { TronWeb, Trx, utils as tronUtils } from 'tronweb';
import { describe, expect, it } from 'vitest';
import { toTronAddress } from '../../../src/server/addresses/derivation.js';
import { PayoutRequestError } from '../../../src/server/payouts/errors.js';
import { HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import {
  buildTrc20Transfer,
  MAX_EXPIRATION_MS,
  MAX_FEE_LIMIT_SUN,
  referenceBlockOf,
  signTrc20Transfer,
  type Trc20TransferRequest,
  type TronReferenceBlock,
} from '../../../src/server/payouts/tron.js';
import { decodeTokenTransfer, provesTransfer } from '../../../src/server/payouts/transfer-proof.js';

const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const KEY = sha256(new TextEncoder().encode('the Tron payout test wallet'));
const wallet = new HotWallet('Tron', KEY);
/** No request leaves: tronweb builds locally (txLocal with a block header); the host is a closed loopback port. */
const tronWeb = new TronWeb({ fullHost: 'http://127.0.0.1:9' });

/** A block as a node's getnowblock shows one: the blockID starts with the number. */
function block(number: number, timestamp: number, seed = 'a block'): TronReferenceBlock {
  return { number, hash: number.toString(16).padStart(16, '0') + bytesToHex(sha256(new TextEncoder().encode(`${seed} ${number}`))).slice(16), timestamp };
}

/** tronweb's own local build of the same transfer; its reference fields derived as its getCurrentRefBlockParams does. */
async function tronwebTransfer(owner: string, request: Trc20TransferRequest) {
  const { referenceBlock } = request;
  const { transaction } = await tronWeb.transactionBuilder.triggerSmartContract(
    request.token,
    'transfer(address,uint256)',
    {
      txLocal: true,
      feeLimit: request.feeLimit,
      blockHeader: {
        ref_block_bytes: referenceBlock.number.toString(16).slice(-4).padStart(4, '0'),
        ref_block_hash: referenceBlock.hash.slice(16, 32),
        expiration: request.expiration,
        timestamp: request.timestamp ?? referenceBlock.timestamp,
      },
    } as Parameters<typeof tronWeb.transactionBuilder.triggerSmartContract>[2],
    [
      { type: 'address', value: request.to },
      { type: 'uint256', value: request.amount.toString() },
    ],
    owner,
  );
  return transaction as unknown as { txID: string; raw_data_hex: string; raw_data: Record<string, unknown>; visible: boolean };
}

const base: Trc20TransferRequest = {
  referenceBlock: block(70_123_456, 1_760_000_001_000),
  expiration: 1_760_000_061_000,
  feeLimit: 30_000_000,
  token: USDT,
  to: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeL',
  amount: 1_500_000n,
};

describe('a TRC-20 payout built offline', () => {
  it('is byte for byte the transaction tronweb builds: raw_data_hex, txID and raw_data', async () => {
    const ours = buildTrc20Transfer(wallet.address, base);
    const theirs = await tronwebTransfer(wallet.address, base);
    expect(ours.raw_data_hex).toBe(theirs.raw_data_hex);
    expect(ours.txID).toBe(theirs.txID);
    expect(ours.txID).toBe(bytesToHex(sha256(hexToBytes(ours.raw_data_hex))));
    expect(ours.raw_data).toEqual(theirs.raw_data);
    expect(ours.visible).toBe(false);
  });

  it('agrees with tronweb on 200 random transfers: keys, tokens, destinations, amounts up to 2^256 - 1, blocks, times, fee limits', async () => {
    const id = fc.uint8Array({ minLength: 20, maxLength: 20 }).filter((bytes) => bytes.some((byte) => byte !== 0));
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ minLength: 32, maxLength: 32 }).filter((key) => {
          try {
            new HotWallet('Tron', key);
            return true;
          } catch {
            return false;
          }
        }),
        id,
        id,
        fc.bigInt({ min: 1n, max: (1n << 256n) - 1n }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        fc.integer({ min: 1_500_000_000_000, max: 2_500_000_000_000 }),
        fc.integer({ min: 1, max: MAX_EXPIRATION_MS }),
        fc.integer({ min: 1, max: MAX_FEE_LIMIT_SUN }),
        fc.option(fc.integer({ min: 1, max: 60_000 }), { nil: undefined }),
        async (key, token, to, amount, number, time, lifetime, feeLimit, earlier) => {
          const signer = new HotWallet('Tron', key);
          const request: Trc20TransferRequest = {
            referenceBlock: block(number, time, bytesToHex(key)),
            expiration: time + lifetime,
            ...(earlier === undefined ? {} : { timestamp: time - earlier }),
            feeLimit,
            token: toTronAddress(token),
            to: toTronAddress(to),
            amount,
          };
          const ours = signTrc20Transfer(signer, request);
          const theirs = await tronwebTransfer(signer.address, request);
          expect(ours.raw_data_hex).toBe(theirs.raw_data_hex);
          expect(ours.txID).toBe(theirs.txID);
          expect(ours.raw_data).toEqual(theirs.raw_data);
          // tronweb signs the txID with the same key to the same signature, and recovers the signer from ours.
          const signedByTronweb = await tronWeb.trx.sign({ ...theirs } as never, bytesToHex(key));
          expect(ours.signature).toEqual((signedByTronweb as unknown as { signature: string[] }).signature.map((s) => s.toLowerCase()));
          expect(Trx.ecRecover(ours as never)).toBe(signer.address);
          compared++;
        },
      ),
      { numRuns: 200 },
    );
    expect(compared).toBe(200);
  });

  it('is what tronweb makes of our JSON as a node does (raw_data to protobuf), and of our bytes when it decodes them', () => {
    const ours = buildTrc20Transfer(wallet.address, { ...base, amount: (1n << 255n) + 12345n, timestamp: base.referenceBlock.timestamp - 5 });
    const pb = tronUtils.transaction.txJsonToPb(ours);
    expect(tronUtils.transaction.txPbToRawDataHex(pb).toLowerCase()).toBe(ours.raw_data_hex);
    expect(tronUtils.transaction.txPbToTxID(pb).replace(/^0x/, '')).toBe(ours.txID);
    expect(tronUtils.transaction.txCheck(ours)).toBe(true);
    // tronweb's decoder writes hex in capitals.
    const decoded = JSON.parse(JSON.stringify(tronUtils.deserializeTx.deserializeTransaction('TriggerSmartContract', ours.raw_data_hex)), (_, value: unknown) =>
      typeof value === 'string' && /^[0-9A-F]+$/.test(value) ? value.toLowerCase() : value,
    ) as Record<string, unknown>;
    expect(decoded).toMatchObject({
      ref_block_bytes: ours.raw_data.ref_block_bytes,
      ref_block_hash: ours.raw_data.ref_block_hash,
      expiration: ours.raw_data.expiration,
      timestamp: ours.raw_data.timestamp,
      fee_limit: ours.raw_data.fee_limit,
      contract: [
        {
          type: 'TriggerSmartContract',
          parameter: {
            type_url: 'type.googleapis.com/protocol.TriggerSmartContract',
            value: {
              owner_address: TronWeb.address.toHex(wallet.address).toLowerCase(),
              contract_address: TronWeb.address.toHex(USDT).toLowerCase(),
              data: ours.raw_data.contract[0].parameter.value.data,
              call_value: 0,
            },
          },
        },
      ],
    });
    // The calldata is transfer(to, amount) as tronweb's ABI coder writes it.
    const { to, amount } = tronUtils.abi.decodeParams(['to', 'amount'], ['address', 'uint256'], `0x${ours.raw_data.contract[0].parameter.value.data}`, true) as { to: string; amount: bigint };
    expect(TronWeb.address.fromHex(to)).toBe(base.to);
    expect(BigInt(amount.toString())).toBe((1n << 255n) + 12345n);
  });

  it('refers to its block by TaPoS: the low 16 bits of the number and bytes 8-16 of the blockID', () => {
    const ours = buildTrc20Transfer(wallet.address, { ...base, referenceBlock: block(0x1234abcd, base.referenceBlock.timestamp) });
    expect(ours.raw_data.ref_block_bytes).toBe('abcd');
    expect(ours.raw_data.ref_block_hash).toBe(block(0x1234abcd, 0).hash.slice(16, 32));
    expect(ours.raw_data.timestamp).toBe(base.referenceBlock.timestamp);
  });

  it('signs r || s || v with v = 27 + the recovery id, and the signature recovers the hot wallet', () => {
    const signed = signTrc20Transfer(wallet, base);
    expect(signed.signature).toHaveLength(1);
    expect(signed.signature[0]).toMatch(/^[0-9a-f]{128}(1b|1c)$/);
    expect(tronUtils.crypto.ecRecover(signed.txID, signed.signature[0]).toLowerCase()).toBe(TronWeb.address.toHex(wallet.address).toLowerCase());
    expect(signTrc20Transfer(wallet, base)).toEqual(signed);
    // Another payout, another txID, another signature.
    expect(signTrc20Transfer(wallet, { ...base, amount: base.amount + 1n }).txID).not.toBe(signed.txID);
  });

  it('reads its reference block from a getnowblock answer', () => {
    const reference = block(70_000_019, 1_760_000_057_000);
    const answer = { blockID: reference.hash.toUpperCase(), block_header: { raw_data: { number: reference.number, timestamp: reference.timestamp, parentHash: '00' }, witness_signature: '' } };
    expect(referenceBlockOf(answer)).toEqual(reference);
    expect(() => referenceBlockOf({})).toThrow(PayoutRequestError);
    expect(() => referenceBlockOf(null)).toThrow(PayoutRequestError);
    expect(() => referenceBlockOf({ ...answer, block_header: { raw_data: { number: reference.number + 1, timestamp: reference.timestamp } } })).toThrow(/is not block 70000020's/);
  });

  it('refuses a request no node would take, before signing', () => {
    const refused: Partial<Trc20TransferRequest>[] = [
      { expiration: base.referenceBlock.timestamp },
      { expiration: base.referenceBlock.timestamp - 1 },
      { expiration: base.referenceBlock.timestamp + MAX_EXPIRATION_MS + 1 },
      { expiration: 1.5e12 + 0.5 },
      { timestamp: base.expiration },
      { timestamp: 0 },
      { feeLimit: 0 },
      { feeLimit: MAX_FEE_LIMIT_SUN + 1 },
      { feeLimit: 1.5 },
      { amount: 0n },
      { amount: 1n << 256n },
      { amount: 5 as unknown as bigint },
      { to: '0x' + '12'.repeat(20) },
      { to: 'TNPeeaaFB7K9cmo4uQpcU32zGK8G1NYqeM' }, // checksum broken
      { to: toTronAddress(new Uint8Array(20)) },
      { token: 'not an address' },
      { referenceBlock: { ...base.referenceBlock, number: base.referenceBlock.number + 1 } },
      { referenceBlock: { ...base.referenceBlock, hash: base.referenceBlock.hash.slice(2) } },
      { referenceBlock: { ...base.referenceBlock, timestamp: -1 } },
    ];
    for (const change of refused) {
      expect(() => signTrc20Transfer(wallet, { ...base, ...change }), JSON.stringify(change, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))).toThrow(PayoutRequestError);
    }
    expect(() => signTrc20Transfer(new HotWallet('Ethereum', KEY), base)).toThrow(/needs the Tron hot wallet/);
    expect(() => buildTrc20Transfer('T' + '1'.repeat(33), base)).toThrow(/owner is not a Tron address/);
    expect(() => buildTrc20Transfer(wallet.address, { ...base, expiration: base.referenceBlock.timestamp + MAX_EXPIRATION_MS })).not.toThrow();
  });
});

describe("a Tron transaction's proof", () => {
  // A log of gettransactioninfobyid: the contract's address without its 41, topics and data without 0x.
  const from = TronWeb.address.toHex(wallet.address).slice(2).toLowerCase();
  const to = TronWeb.address.toHex(base.to).slice(2).toLowerCase();
  const log = {
    address: TronWeb.address.toHex(USDT).slice(2).toLowerCase(),
    topics: ['ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef', from.padStart(64, '0'), to.padStart(64, '0')],
    data: (1_500_000n).toString(16).padStart(64, '0'),
  };
  const proof = { token: USDT, from: wallet.address, to: base.to, amount: 1_500_000n };

  it('decodes a TRC-20 Transfer from a node log, in base58 and with visible=true addresses too', () => {
    expect(decodeTokenTransfer('Tron', log)).toEqual(proof);
    expect(decodeTokenTransfer('Tron', { ...log, address: USDT })).toEqual(proof);
    expect(decodeTokenTransfer('Tron', { ...log, address: `41${log.address}` })).toEqual(proof);
    expect(decodeTokenTransfer('Tron', { ...log, address: `0x${log.address}`, topics: log.topics.map((t) => `0x${t}`), data: `0x${log.data}` })).toEqual(proof);
  });

  it('holds for the exact transfer only', () => {
    expect(provesTransfer('Tron', [log], proof)).toBe(true);
    expect(provesTransfer('Tron', [log], { ...proof, amount: 1_500_001n })).toBe(false);
    expect(provesTransfer('Tron', [log], { ...proof, to: wallet.address })).toBe(false);
    expect(provesTransfer('Tron', [log], { ...proof, from: base.to })).toBe(false);
    expect(provesTransfer('Tron', [log], { ...proof, token: base.to })).toBe(false);
    expect(provesTransfer('Tron', [], proof)).toBe(false);
    expect(provesTransfer('Tron', [{ ...log, topics: log.topics.slice(0, 2) }], proof)).toBe(false);
    expect(provesTransfer('Tron', [{ ...log, topics: ['8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925', ...log.topics.slice(1)] }], proof)).toBe(false);
    expect(provesTransfer('Tron', [{ ...log, data: log.data + '00' }], proof)).toBe(false);
    expect(provesTransfer('Tron', [{ ...log, topics: [log.topics[0]!, `ff${log.topics[1]!.slice(2)}`, log.topics[2]!] }], proof)).toBe(false);
  });
});
