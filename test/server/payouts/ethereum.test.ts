// Ethereum payouts on a real local chain (anvil): the hot wallet's signed ERC-20 transfer is taken,
// mined and proven; the same bytes sent again pay nothing more; a fee bump under the same nonce
// replaces a stuck transfer and only one of the two is mined.
import { sha256 } from '@noble/hashes/sha2.js';
import { RLP } from '@ethereumjs/rlp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { erc20TransferData, replacementFees, signErc20Transfer, type Erc20TransferRequest } from '../../../src/server/payouts/ethereum.js';
import { PayoutRequestError } from '../../../src/server/payouts/errors.js';
import { decodeTokenTransfer, provesTransfer } from '../../../src/server/payouts/transfer-proof.js';
import { RpcError, selector, startChain, type Chain, type Hex, type Receipt, type Token } from '../../support/chain.js';

const HOT_WALLET_FUNDS = 1_000_000_000n; // 1,000 USDT
let chain: Chain;
let token: Token;
const wallet = new HotWallet('Ethereum', sha256(new TextEncoder().encode('the Ethereum payout test wallet')));
let destinations = 0;
/** A fresh destination address per payout, so that its balance shows exactly that payout. */
const destination = () => `0x${(++destinations).toString(16).padStart(4, '0')}${'d'.repeat(36)}`;

beforeAll(async () => {
  chain = await startChain();
  token = await chain.deployToken();
  await chain.setBalance(wallet.address, 10n ** 18n);
  await token.distribute([wallet.address], HOT_WALLET_FUNDS);
});
afterAll(async () => {
  await chain?.stop();
});

async function fees(): Promise<{ maxFeePerGas: bigint; maxPriorityFeePerGas: bigint }> {
  const block = await chain.rpc<{ baseFeePerGas: Hex }>('eth_getBlockByNumber', ['latest', false]);
  const tip = BigInt(await chain.rpc<Hex>('eth_maxPriorityFeePerGas'));
  return { maxFeePerGas: 2n * BigInt(block.baseFeePerGas) + tip, maxPriorityFeePerGas: tip };
}

async function payout(to: string, amount: bigint, overrides: Partial<Erc20TransferRequest> = {}): Promise<Erc20TransferRequest> {
  const nonce = BigInt(await chain.rpc<Hex>('eth_getTransactionCount', [wallet.address, 'pending']));
  const data = erc20TransferData(to, amount);
  const estimate = BigInt(await chain.rpc<Hex>('eth_estimateGas', [{ from: wallet.address, to: token.address, data }]));
  return { chainId: chain.chainId, nonce, ...(await fees()), gasLimit: (estimate * 12n) / 10n, token: token.address, to, amount, ...overrides };
}

async function sendRaw(raw: Hex): Promise<Hex> {
  return chain.rpc<Hex>('eth_sendRawTransaction', [raw]);
}

async function rpcFailure(promise: Promise<unknown>): Promise<RpcError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(RpcError);
  return error as RpcError;
}

describe('an ERC-20 payout signed by the hot wallet', () => {
  it('is mined under the hash computed before sending, and the destination holds exactly the amount', async () => {
    const to = destination();
    const request = await payout(to, 1_500_000n);
    const signed = signErc20Transfer(wallet, request);
    expect(signed.hash).toMatch(/^0x[0-9a-f]{64}$/);
    expect(signed.from).toBe(wallet.address);
    expect(await sendRaw(signed.raw)).toBe(signed.hash);
    const receipt = await chain.waitForReceipt(signed.hash);
    expect(receipt.status).toBe('0x1');
    expect(receipt.transactionHash).toBe(signed.hash);
    expect(await token.balanceOf(to)).toBe(1_500_000n);
    expect(await token.balanceOf(wallet.address)).toBe(HOT_WALLET_FUNDS - 1_500_000n);

    // The node read every field back as they were asked for: the encoding is EIP-1559's.
    const mined = await chain.rpc<Record<string, string>>('eth_getTransactionByHash', [signed.hash]);
    expect(mined).toMatchObject({
      type: '0x2',
      chainId: `0x${chain.chainId.toString(16)}`,
      nonce: `0x${request.nonce.toString(16)}`,
      maxFeePerGas: `0x${request.maxFeePerGas.toString(16)}`,
      maxPriorityFeePerGas: `0x${request.maxPriorityFeePerGas.toString(16)}`,
      gas: `0x${request.gasLimit.toString(16)}`,
      to: token.address,
      value: '0x0',
      input: `${selector('transfer(address,uint256)')}${'0'.repeat(24)}${to.slice(2)}${(1_500_000n).toString(16).padStart(64, '0')}`,
      from: wallet.address.toLowerCase(),
    });

    // The receipt proves the payout, and proves nothing else.
    const proof = { token: token.address, from: wallet.address, to, amount: 1_500_000n };
    expect(provesTransfer('Ethereum', receipt.logs, proof)).toBe(true);
    expect(receipt.logs.map((log) => decodeTokenTransfer('Ethereum', log))).toEqual([
      { token: expect.stringMatching(new RegExp(`^${token.address}$`, 'i')), from: wallet.address, to: expect.stringMatching(new RegExp(`^${to}$`, 'i')), amount: 1_500_000n },
    ]);
    expect(provesTransfer('Ethereum', receipt.logs, { ...proof, amount: 1_500_001n })).toBe(false);
    expect(provesTransfer('Ethereum', receipt.logs, { ...proof, amount: 1_499_999n })).toBe(false);
    expect(provesTransfer('Ethereum', receipt.logs, { ...proof, to: destination() })).toBe(false);
    expect(provesTransfer('Ethereum', receipt.logs, { ...proof, from: chain.accounts[0]! })).toBe(false);
    expect(provesTransfer('Ethereum', receipt.logs, { ...proof, token: chain.accounts[1]! })).toBe(false);
    expect(provesTransfer('Ethereum', receipt.logs.map((log) => ({ ...log, removed: true })), proof)).toBe(false);
  });

  it('signs the same request to the same bytes (a payout signed again after a crash is the same transaction)', async () => {
    const request = await payout(destination(), 7n);
    const first = signErc20Transfer(wallet, request);
    expect(signErc20Transfer(wallet, { ...request })).toEqual(first);
    expect(signErc20Transfer(wallet, { ...request, nonce: request.nonce + 1n }).hash).not.toBe(first.hash);
    // Its RLP holds the twelve fields of a signed type-2 transaction, the signature's integers without leading zeros.
    const fields = RLP.decode(Buffer.from(first.raw.slice(4), 'hex')) as Uint8Array[];
    expect(first.raw.slice(0, 4)).toBe('0x02');
    expect(fields).toHaveLength(12);
    expect(fields[10]![0]).not.toBe(0);
    expect(fields[11]![0]).not.toBe(0);
  });

  it('answers the same bytes sent again with "already imported" while pending and "nonce too low" once mined, and pays once', async () => {
    await chain.setAutomine(false);
    try {
      const to = destination();
      const signed = signErc20Transfer(wallet, await payout(to, 2_000_000n));
      expect(await sendRaw(signed.raw)).toBe(signed.hash);
      const pending = await rpcFailure(sendRaw(signed.raw));
      expect(pending.rpcMessage).toMatch(/already imported|already known/);
      await chain.mine(1);
      expect((await chain.waitForReceipt(signed.hash)).status).toBe('0x1');
      // Once mined, a node no longer knows the bytes as pending: the sender's next nonce is past them, and the
      // payout's proof is its receipt, which the job reads.
      const mined = await rpcFailure(sendRaw(signed.raw));
      expect(mined.rpcMessage).toMatch(/nonce too low/);
      await chain.mine(1);
      expect(await token.balanceOf(to)).toBe(2_000_000n);
    } finally {
      await chain.setAutomine(true);
    }
  });

  it('is replaced under the same nonce by a fee bump of 10 %, and only one of the two is mined', async () => {
    await chain.setAutomine(false);
    try {
      const to = destination();
      const request = await payout(to, 3_000_000n);
      const stuck = signErc20Transfer(wallet, request);
      expect(await sendRaw(stuck.raw)).toBe(stuck.hash);
      const bumped = replacementFees(request);
      expect(bumped.maxFeePerGas).toBe((request.maxFeePerGas * 110n + 99n) / 100n);
      expect(bumped.maxPriorityFeePerGas).toBe((request.maxPriorityFeePerGas * 110n + 99n) / 100n);
      const replacement = signErc20Transfer(wallet, { ...request, ...bumped });
      expect(replacement.nonce).toBe(stuck.nonce);
      expect(replacement.hash).not.toBe(stuck.hash);
      expect(await sendRaw(replacement.raw)).toBe(replacement.hash);
      // The stuck one cannot come back in: its fees are now the lower ones.
      expect((await rpcFailure(sendRaw(stuck.raw))).rpcMessage).toMatch(/underpriced/);
      await chain.mine(1);
      const receipts = await Promise.all([stuck.hash, replacement.hash].map((hash) => chain.rpc<Receipt | null>('eth_getTransactionReceipt', [hash])));
      expect(receipts[0]).toBeNull();
      expect(receipts[1]?.status).toBe('0x1');
      await chain.mine(2);
      expect(await chain.rpc('eth_getTransactionReceipt', [stuck.hash])).toBeNull();
      expect(await token.balanceOf(to)).toBe(3_000_000n);
      expect(BigInt(await chain.rpc<Hex>('eth_getTransactionCount', [wallet.address, 'latest']))).toBe(request.nonce + 1n);
    } finally {
      await chain.setAutomine(true);
    }
  });

  it('mines a transfer the hot wallet cannot cover as reverted, and its receipt proves no payout', async () => {
    const to = destination();
    const amount = (await token.balanceOf(wallet.address)) + 1n;
    const signed = signErc20Transfer(wallet, await payout(to, 1n, { gasLimit: 100_000n, amount }));
    expect(await sendRaw(signed.raw)).toBe(signed.hash);
    const receipt = await chain.waitForReceipt(signed.hash);
    expect(receipt.status).toBe('0x0');
    expect(provesTransfer('Ethereum', receipt.logs, { token: token.address, from: wallet.address, to, amount })).toBe(false);
    expect(await token.balanceOf(to)).toBe(0n);
  });
});

describe('an ERC-20 payout request', () => {
  const base: Erc20TransferRequest = {
    chainId: 1,
    nonce: 0n,
    maxFeePerGas: 30_000_000_000n,
    maxPriorityFeePerGas: 1_000_000_000n,
    gasLimit: 80_000n,
    token: '0xdAC17F958D2ee523a2206206994597C13D831ec7',
    to: '0x' + '12'.repeat(20),
    amount: 1n,
  };

  it('is refused before signing when no chain would take it', () => {
    const refused: Partial<Erc20TransferRequest>[] = [
      { to: '0x1234' },
      { to: 'T' + '1'.repeat(33) },
      { to: '0xdac17F958D2ee523a2206206994597C13D831ec7' }, // EIP-55 checksum broken
      { to: '0x' + '0'.repeat(40) },
      { token: '0x' + '0'.repeat(40) },
      { amount: 0n },
      { amount: -1n },
      { amount: 1n << 256n },
      { amount: 1 as unknown as bigint },
      { maxPriorityFeePerGas: 30_000_000_001n },
      { maxPriorityFeePerGas: -1n },
      { maxFeePerGas: 0n, maxPriorityFeePerGas: 0n },
      { gasLimit: 20_999n },
      { nonce: -1n },
      { nonce: (1n << 64n) - 1n },
      { chainId: 0 },
    ];
    for (const change of refused) expect(() => signErc20Transfer(wallet, { ...base, ...change }), JSON.stringify(change, (_, v) => (typeof v === 'bigint' ? `${v}n` : v))).toThrow(PayoutRequestError);
    expect(() => signErc20Transfer(new HotWallet('Tron', sha256(new Uint8Array(1))), base)).toThrow(/needs the Ethereum hot wallet/);
    expect(() => replacementFees(base, 5n)).toThrow(PayoutRequestError);
  });

  it('takes lower, upper and EIP-55 addresses alike, and a priority fee of zero', () => {
    const lower = signErc20Transfer(wallet, { ...base, token: base.token.toLowerCase() });
    expect(signErc20Transfer(wallet, base)).toEqual(lower);
    expect(signErc20Transfer(wallet, { ...base, token: `0x${base.token.slice(2).toUpperCase()}` })).toEqual(lower);
    expect(() => signErc20Transfer(wallet, { ...base, maxPriorityFeePerGas: 0n })).not.toThrow();
  });

  it('raises a 1-wei fee by 1 wei at least', () => {
    expect(replacementFees({ maxFeePerGas: 1n, maxPriorityFeePerGas: 0n })).toEqual({ maxFeePerGas: 2n, maxPriorityFeePerGas: 1n });
    expect(replacementFees({ maxFeePerGas: 100n, maxPriorityFeePerGas: 10n }, 25n)).toEqual({ maxFeePerGas: 125n, maxPriorityFeePerGas: 13n });
  });
});
