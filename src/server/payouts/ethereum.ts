// An Ethereum payout: the token's ERC-20 transfer(to, amount) as an EIP-1559 (type 2) transaction,
// signed by the hot wallet. The encoding is EIP-1559's: 0x02 || rlp([chainId, nonce,
// maxPriorityFeePerGas, maxFeePerGas, gas, to, value, data, accessList, yParity, r, s]), signed over
// keccak256(0x02 || rlp(the first nine)); the hash is keccak256 of the signed bytes.
// (@noble/curves signs, @ethereumjs/rlp encodes: docs/decisions.md, "Payouts".)
import { RLP } from '@ethereumjs/rlp';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, concatBytes, hexToBytes } from '@noble/hashes/utils.js';
import { isAddress } from '../addresses/derivation.js';
import { PayoutRequestError } from './errors.js';
import type { HotWallet } from './hot-wallet.js';

export type Hex = `0x${string}`;

const TYPE_EIP1559 = 0x02;
/** keccak256("transfer(address,uint256)")[0..4] */
const TRANSFER_SELECTOR = 'a9059cbb';
const UINT64_LIMIT = 1n << 64n;
const UINT256_LIMIT = 1n << 256n;
/** What any transaction costs before its calldata and execution. */
const INTRINSIC_GAS = 21_000n;
/** Geth's txpool price bump (reth's too): a replacement must raise both fee caps by 10 % at least (anvil takes any raise). */
export const MIN_REPLACEMENT_BUMP_PERCENT = 10n;

export interface Erc20TransferRequest {
  chainId: bigint | number;
  /** The hot wallet's nonce this payout is pinned to. */
  nonce: bigint;
  /** Wei per gas, the most the transaction pays (base fee + tip). */
  maxFeePerGas: bigint;
  /** Wei per gas, the tip to the block's producer; at most maxFeePerGas. */
  maxPriorityFeePerGas: bigint;
  gasLimit: bigint;
  /** The ERC-20 contract (0x hex; EIP-55 checked when mixed case). */
  token: string;
  /** The destination of the tokens (0x hex; EIP-55 checked when mixed case). */
  to: string;
  /** In the token's smallest unit. */
  amount: bigint;
}

export interface SignedEthereumTransaction {
  /** The signed transaction as eth_sendRawTransaction takes it. */
  raw: Hex;
  /** keccak256 of `raw`: the transaction hash the chain will know it by (lower case). */
  hash: Hex;
  /** The hot wallet's address (EIP-55). */
  from: string;
  nonce: bigint;
}

/** The calldata of ERC-20 transfer(to, amount). */
export function erc20TransferData(to: string, amount: bigint): Hex {
  return `0x${TRANSFER_SELECTOR}${bytesToHex(addressBytes('to', to)).padStart(64, '0')}${word('amount', amount)}`;
}

/** Builds and signs the ERC-20 transfer of `request`. Throws PayoutRequestError on a request no chain would take. */
export function signErc20Transfer(wallet: HotWallet, request: Erc20TransferRequest): SignedEthereumTransaction {
  if (wallet.network !== 'Ethereum') throw new PayoutRequestError(`an Ethereum payout needs the Ethereum hot wallet, not the ${wallet.network} one`);
  const fields = unsignedFields(request);
  const digest = keccak_256(concatBytes(Uint8Array.of(TYPE_EIP1559), RLP.encode(fields)));
  const { r, s, recovery } = wallet.signDigest(digest);
  // RLP integers have no leading zero bytes: r and s go in as numbers, not as their 32-byte forms.
  const signed = concatBytes(Uint8Array.of(TYPE_EIP1559), RLP.encode([...fields, recovery, toBigInt(r), toBigInt(s)]));
  return { raw: `0x${bytesToHex(signed)}`, hash: `0x${bytesToHex(keccak_256(signed))}`, from: wallet.address, nonce: request.nonce };
}

/**
 * The gas limit a signed transfer (`raw`, as signErc20Transfer made it) carries. A replacement keeps its
 * original's: estimated again against the pending state, where the original has already moved the
 * tokens, the estimate comes out lower than the transfer needs (34,448 against 51,548), and mined, the
 * replacement reverts.
 */
export function signedGasLimit(raw: string): bigint {
  const fields = RLP.decode(hexToBytes(raw.slice(4))) as Uint8Array[];
  return toBigInt(fields[4]!);
}

/**
 * The fees of a replacement for a transaction stuck with `previous` fees, under the same nonce: each cap
 * raised by `bumpPercent` (at least 10, what nodes require) rounded up, and by 1 wei at least, so that
 * the node takes it in place of the first (and only one of the two can be mined).
 */
export function replacementFees(
  previous: { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint },
  bumpPercent: bigint = MIN_REPLACEMENT_BUMP_PERCENT,
): { maxFeePerGas: bigint; maxPriorityFeePerGas: bigint } {
  if (bumpPercent < MIN_REPLACEMENT_BUMP_PERCENT) throw new PayoutRequestError(`a replacement raises its fees by ${MIN_REPLACEMENT_BUMP_PERCENT} % at least`);
  const bump = (value: bigint) => {
    const raised = (value * (100n + bumpPercent) + 99n) / 100n;
    return raised > value ? raised : value + 1n;
  };
  return { maxFeePerGas: bump(previous.maxFeePerGas), maxPriorityFeePerGas: bump(previous.maxPriorityFeePerGas) };
}

function unsignedFields(request: Erc20TransferRequest): (bigint | Uint8Array | [])[] {
  const chainId = BigInt(request.chainId);
  if (chainId < 1n || chainId >= UINT64_LIMIT) throw new PayoutRequestError(`chainId out of range: ${request.chainId}`);
  if (typeof request.nonce !== 'bigint' || request.nonce < 0n || request.nonce >= UINT64_LIMIT - 1n) throw new PayoutRequestError(`nonce out of range: ${request.nonce}`);
  if (typeof request.maxFeePerGas !== 'bigint' || request.maxFeePerGas < 1n || request.maxFeePerGas >= UINT256_LIMIT) {
    throw new PayoutRequestError(`maxFeePerGas out of range: ${request.maxFeePerGas}`);
  }
  if (typeof request.maxPriorityFeePerGas !== 'bigint' || request.maxPriorityFeePerGas < 0n || request.maxPriorityFeePerGas > request.maxFeePerGas) {
    throw new PayoutRequestError(`maxPriorityFeePerGas must be between 0 and maxFeePerGas: ${request.maxPriorityFeePerGas}`);
  }
  if (typeof request.gasLimit !== 'bigint' || request.gasLimit < INTRINSIC_GAS || request.gasLimit >= UINT64_LIMIT) {
    throw new PayoutRequestError(`gasLimit out of range (${INTRINSIC_GAS} at least): ${request.gasLimit}`);
  }
  if (typeof request.amount !== 'bigint' || request.amount < 1n) throw new PayoutRequestError(`a payout's amount is a positive integer of smallest units: ${request.amount}`);
  const token = addressBytes('token', request.token);
  if (token.every((byte) => byte === 0)) throw new PayoutRequestError('the token contract cannot be the zero address');
  if (addressBytes('to', request.to).every((byte) => byte === 0)) throw new PayoutRequestError('a payout to the zero address would burn the tokens');
  const data = hexToBytes(erc20TransferData(request.to, request.amount).slice(2));
  // value 0: the tokens move, no ether; accessList empty.
  return [chainId, request.nonce, request.maxPriorityFeePerGas, request.maxFeePerGas, request.gasLimit, token, 0n, data, []];
}

function addressBytes(name: string, address: string): Uint8Array {
  if (typeof address !== 'string' || !isAddress('Ethereum', address)) throw new PayoutRequestError(`${name} is not an Ethereum address (0x and 40 hex digits, EIP-55 checked when mixed case): ${String(address)}`);
  return hexToBytes(address.slice(2).toLowerCase());
}

function word(name: string, value: bigint): string {
  if (typeof value !== 'bigint' || value < 0n || value >= UINT256_LIMIT) throw new PayoutRequestError(`${name} out of range for uint256: ${String(value)}`);
  return value.toString(16).padStart(64, '0');
}

function toBigInt(bytes: Uint8Array): bigint {
  return BigInt(`0x${bytesToHex(bytes)}`);
}

