// The proof that a payout was made: its mined transaction's logs hold the token's Transfer from the hot
// wallet to the destination for the exact amount. Read from an Ethereum receipt (0x hex) or a Tron
// node's gettransactioninfobyid (hex without 0x, the contract's address without its 41 prefix) alike.
import { tronAddressToId, toChecksumAddress, toTronAddress } from '../addresses/derivation.js';
import type { Network } from '../shared/network.js';
import { TRANSFER_TOPIC } from '../chain/transfer-logs.js';

/** A log as either chain's node writes it. */
export interface ChainLog {
  address: string;
  topics: readonly string[];
  data: string;
  removed?: boolean;
}

/** A token transfer; addresses in the network's form (EIP-55, base58check `T…`), amount in smallest units. */
export interface TokenTransfer {
  token: string;
  from: string;
  to: string;
  amount: bigint;
}

const TOPIC = TRANSFER_TOPIC.slice(2);

/** The ERC-20/TRC-20 Transfer a log records, or undefined for any other log (or a removed one). */
export function decodeTokenTransfer(network: Network, log: ChainLog): TokenTransfer | undefined {
  if (log.removed || log.topics.length !== 3) return undefined;
  const [topic0, fromTopic, toTopic] = log.topics.map(bareHex);
  if (topic0 !== TOPIC) return undefined;
  const data = bareHex(log.data);
  const token = logAddressId(log.address);
  const from = topicAddressId(fromTopic!);
  const to = topicAddressId(toTopic!);
  if (!token || !from || !to || !/^[0-9a-f]{64}$/.test(data)) return undefined;
  const format = (id: string) => (network === 'Tron' ? toTronAddress(hexBytes(id)) : toChecksumAddress(hexBytes(id)));
  return { token: format(token), from: format(from), to: format(to), amount: BigInt(`0x${data}`) };
}

/** True when `logs` hold the token's Transfer of exactly `expected` (same token, from, to and amount). */
export function provesTransfer(network: Network, logs: readonly ChainLog[], expected: TokenTransfer): boolean {
  const want = { token: addressId(network, expected.token), from: addressId(network, expected.from), to: addressId(network, expected.to) };
  return logs.some((log) => {
    const transfer = decodeTokenTransfer(network, log);
    return (
      transfer !== undefined &&
      transfer.amount === expected.amount &&
      addressId(network, transfer.token) === want.token &&
      addressId(network, transfer.from) === want.from &&
      addressId(network, transfer.to) === want.to
    );
  });
}

/** A network address as 40 lower-case hex digits. */
function addressId(network: Network, address: string): string {
  if (network === 'Tron') return Buffer.from(tronAddressToId(address)).toString('hex');
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new Error(`not an Ethereum address: ${address}`);
  return address.slice(2).toLowerCase();
}

/** A log's contract address: 0x + 40 hex (Ethereum, Tron's JSON-RPC), 40 hex (Tron's HTTP API), 41 + 40 hex. */
function logAddressId(address: string): string | undefined {
  const hex = bareHex(address);
  if (/^[0-9a-f]{40}$/.test(hex)) return hex;
  if (/^41[0-9a-f]{40}$/.test(hex)) return hex.slice(2);
  try {
    return Buffer.from(tronAddressToId(address)).toString('hex'); // visible=true answers base58
  } catch {
    return undefined;
  }
}

/** A 32-byte topic that holds an address (12 zero bytes, then the 20 of the address). */
function topicAddressId(topic: string): string | undefined {
  return /^0{24}[0-9a-f]{40}$/.test(topic) ? topic.slice(24) : undefined;
}

function bareHex(value: string): string {
  return value.replace(/^0x/i, '').toLowerCase();
}

function hexBytes(hex: string): Uint8Array {
  return Uint8Array.from(Buffer.from(hex, 'hex'));
}
