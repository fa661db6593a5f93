// A Tron payout: the token's TRC-20 transfer(to, amount) as a TriggerSmartContract transaction, built
// and signed offline. Its raw_data is protobuf (protocol.Transaction.raw of java-tron's Tron.proto),
// encoded here field by field; txID = sha256(raw_data bytes), fixed before signing; the signature is
// r || s || v (v = 27 + recovery id) over the txID. The result is the JSON /wallet/broadcasttransaction
// takes. Checked byte for byte against tronweb's own builder (test/server/payouts/tron.test.ts).
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { tronAddressToId } from '../addresses/derivation.js';
import { PayoutRequestError } from './errors.js';
import type { HotWallet } from './hot-wallet.js';

/** A node refuses a transaction that expires later than this after its head block (java-tron's MAXIMUM_TIME_UNTIL_EXPIRATION). */
export const MAX_EXPIRATION_MS = 24 * 60 * 60 * 1000;
/** The network's largest fee_limit: 15,000 TRX (https://developers.tron.network/docs/feelimit). */
export const MAX_FEE_LIMIT_SUN = 15_000_000_000;
const TRON_ADDRESS_PREFIX = 0x41;
/** protocol.Transaction.Contract.ContractType.TriggerSmartContract */
const TRIGGER_SMART_CONTRACT = 31;
const TRIGGER_TYPE_URL = 'type.googleapis.com/protocol.TriggerSmartContract';
/** keccak256("transfer(address,uint256)")[0..4] */
const TRANSFER_SELECTOR = 'a9059cbb';
const UINT256_LIMIT = 1n << 256n;

/** A block to refer to (TaPoS), as /wallet/getnowblock describes it. */
export interface TronReferenceBlock {
  number: number;
  /** The blockID: 64 hex digits, the first 16 of which are the block number. */
  hash: string;
  /** Milliseconds since the epoch. */
  timestamp: number;
}

export interface Trc20TransferRequest {
  referenceBlock: TronReferenceBlock;
  /** Milliseconds since the epoch: after the reference block's time, at most 24 hours after it. */
  expiration: number;
  /** The transaction's creation time in ms (raw_data.timestamp); the reference block's time unless given. */
  timestamp?: number;
  /** The most TRX (in sun) the call may burn for energy; 1 to 15,000 TRX. */
  feeLimit: number;
  /** The TRC-20 contract, base58check. */
  token: string;
  /** The destination of the tokens, base58check. */
  to: string;
  /** In the token's smallest unit. */
  amount: bigint;
}

/** raw_data as java-tron's JSON shows it with visible=false: addresses and bytes in hex without 0x. */
export interface TronRawData {
  contract: [
    {
      parameter: { value: { data: string; owner_address: string; contract_address: string }; type_url: typeof TRIGGER_TYPE_URL };
      type: 'TriggerSmartContract';
    },
  ];
  ref_block_bytes: string;
  ref_block_hash: string;
  expiration: number;
  fee_limit: number;
  timestamp: number;
}

export interface UnsignedTronTransaction {
  visible: false;
  /** sha256 of raw_data's bytes, 64 hex digits: the id the chain will know it by. */
  txID: string;
  raw_data: TronRawData;
  raw_data_hex: string;
}

/** The body of /wallet/broadcasttransaction. */
export interface SignedTronTransaction extends UnsignedTronTransaction {
  /** One signature, r || s || v as 130 hex digits. */
  signature: [string];
}

/** The reference block of a /wallet/getnowblock (or /walletsolidity/getnowblock) answer. */
export function referenceBlockOf(nowBlock: unknown): TronReferenceBlock {
  const block = nowBlock as { blockID?: unknown; block_header?: { raw_data?: { number?: unknown; timestamp?: unknown } } } | null;
  const hash = block?.blockID;
  const number = block?.block_header?.raw_data?.number;
  const timestamp = block?.block_header?.raw_data?.timestamp;
  if (typeof hash !== 'string' || typeof number !== 'number' || typeof timestamp !== 'number') {
    throw new PayoutRequestError('not a Tron block: blockID, block_header.raw_data.number and .timestamp are required');
  }
  const reference = { number, hash: hash.toLowerCase(), timestamp };
  checkReferenceBlock(reference);
  return reference;
}

/** Builds the unsigned TRC-20 transfer from `owner` (base58check) of `request`. */
export function buildTrc20Transfer(owner: string, request: Trc20TransferRequest): UnsignedTronTransaction {
  checkReferenceBlock(request.referenceBlock);
  const { referenceBlock, expiration, feeLimit } = request;
  const timestamp = request.timestamp ?? referenceBlock.timestamp;
  if (!Number.isSafeInteger(expiration) || expiration <= referenceBlock.timestamp || expiration > referenceBlock.timestamp + MAX_EXPIRATION_MS) {
    throw new PayoutRequestError(`expiration must fall after the reference block's time and at most 24 hours after it: ${expiration}`);
  }
  if (!Number.isSafeInteger(timestamp) || timestamp <= 0 || timestamp >= expiration) throw new PayoutRequestError(`timestamp must be positive and before the expiration: ${timestamp}`);
  if (!Number.isSafeInteger(feeLimit) || feeLimit < 1 || feeLimit > MAX_FEE_LIMIT_SUN) throw new PayoutRequestError(`feeLimit must be 1 to ${MAX_FEE_LIMIT_SUN} sun: ${feeLimit}`);
  if (typeof request.amount !== 'bigint' || request.amount < 1n || request.amount >= UINT256_LIMIT) {
    throw new PayoutRequestError(`a payout's amount is a positive integer of smallest units below 2^256: ${String(request.amount)}`);
  }
  const ownerAddress = tronAddressBytes('owner', owner);
  const contractAddress = tronAddressBytes('token', request.token);
  const to = tronAddressBytes('to', request.to);
  if (to.subarray(1).every((byte) => byte === 0)) throw new PayoutRequestError('a payout to the zero address would burn the tokens');
  // ABI: the selector, the address's 20 bytes (without 41) in a word, the amount in a word.
  const data = hexToBytes(`${TRANSFER_SELECTOR}${bytesToHex(to.subarray(1)).padStart(64, '0')}${request.amount.toString(16).padStart(64, '0')}`);
  const refBlockBytes = hexToBytes(BigInt(referenceBlock.number).toString(16).padStart(16, '0').slice(-4));
  const refBlockHash = hexToBytes(referenceBlock.hash.slice(16, 32));

  // protocol.TriggerSmartContract { owner_address = 1; contract_address = 2; data = 4 } (call_value 0 is not written).
  const trigger = concatBytes(bytesField(1, ownerAddress), bytesField(2, contractAddress), bytesField(4, data));
  // google.protobuf.Any { type_url = 1; value = 2 }
  const parameter = concatBytes(bytesField(1, utf8ToBytes(TRIGGER_TYPE_URL)), bytesField(2, trigger));
  // protocol.Transaction.Contract { type = 1; parameter = 2 }
  const contract = concatBytes(varintField(1, TRIGGER_SMART_CONTRACT), bytesField(2, parameter));
  // protocol.Transaction.raw { ref_block_bytes = 1; ref_block_hash = 4; expiration = 8; contract = 11; timestamp = 14; fee_limit = 18 },
  // in field order, as protobuf serializers write them.
  const raw = concatBytes(
    bytesField(1, refBlockBytes),
    bytesField(4, refBlockHash),
    varintField(8, expiration),
    bytesField(11, contract),
    varintField(14, timestamp),
    varintField(18, feeLimit),
  );
  return {
    visible: false,
    txID: bytesToHex(sha256(raw)),
    raw_data: {
      contract: [
        {
          parameter: {
            value: { data: bytesToHex(data), owner_address: bytesToHex(ownerAddress), contract_address: bytesToHex(contractAddress) },
            type_url: TRIGGER_TYPE_URL,
          },
          type: 'TriggerSmartContract',
        },
      ],
      ref_block_bytes: bytesToHex(refBlockBytes),
      ref_block_hash: bytesToHex(refBlockHash),
      expiration,
      fee_limit: feeLimit,
      timestamp,
    },
    raw_data_hex: bytesToHex(raw),
  };
}

/** Builds and signs the TRC-20 transfer of `request` from the Tron hot wallet. */
export function signTrc20Transfer(wallet: HotWallet, request: Trc20TransferRequest): SignedTronTransaction {
  if (wallet.network !== 'Tron') throw new PayoutRequestError(`a Tron payout needs the Tron hot wallet, not the ${wallet.network} one`);
  const unsigned = buildTrc20Transfer(wallet.address, request);
  const { r, s, recovery } = wallet.signDigest(hexToBytes(unsigned.txID));
  return { ...unsigned, signature: [bytesToHex(concatBytes(r, s, Uint8Array.of(27 + recovery)))] };
}

function checkReferenceBlock(block: TronReferenceBlock): void {
  if (!Number.isSafeInteger(block.number) || block.number < 0) throw new PayoutRequestError(`reference block number out of range: ${block.number}`);
  if (typeof block.hash !== 'string' || !/^[0-9a-fA-F]{64}$/.test(block.hash)) throw new PayoutRequestError('a reference block hash (blockID) is 64 hex digits');
  // A Tron blockID starts with the block's number: a hash and number of two different blocks are refused.
  if (BigInt(`0x${block.hash.slice(0, 16)}`) !== BigInt(block.number)) throw new PayoutRequestError(`blockID ${block.hash} is not block ${block.number}'s`);
  if (!Number.isSafeInteger(block.timestamp) || block.timestamp <= 0) throw new PayoutRequestError(`reference block timestamp out of range: ${block.timestamp}`);
}

/** A base58check address as the 21 bytes Tron's protobuf carries (0x41 and the 20-byte id). */
function tronAddressBytes(name: string, address: string): Uint8Array {
  let id: Uint8Array;
  try {
    id = tronAddressToId(address);
  } catch {
    throw new PayoutRequestError(`${name} is not a Tron address (base58check, T…): ${String(address)}`);
  }
  return concatBytes(Uint8Array.of(TRON_ADDRESS_PREFIX), id);
}

// ---- protobuf: the two wire types a transfer needs ----

function varint(value: bigint): Uint8Array {
  const bytes: number[] = [];
  let rest = value;
  do {
    const low = Number(rest & 0x7fn);
    rest >>= 7n;
    bytes.push(rest > 0n ? low | 0x80 : low);
  } while (rest > 0n);
  return Uint8Array.from(bytes);
}

/** Wire type 0; only ever a positive value here (proto3 leaves zero out). */
function varintField(field: number, value: number): Uint8Array {
  return concatBytes(varint(BigInt(field << 3)), varint(BigInt(value)));
}

/** Wire type 2: length, then the bytes. */
function bytesField(field: number, bytes: Uint8Array): Uint8Array {
  return concatBytes(varint(BigInt((field << 3) | 2)), varint(BigInt(bytes.length)), bytes);
}
