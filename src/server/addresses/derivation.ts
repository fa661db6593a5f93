// Deposit addresses from account-level extended public keys
// (docs/design.md#the-platforms-architecture): child 0/index of an xpub at m/44'/60'/0' (Ethereum) or
// m/44'/195'/0' (Tron). The platform never holds a private key.
import { createHmac } from 'node:crypto';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { base58check } from '@scure/base';
import secp256k1 from 'secp256k1';
import { HDKey } from '@scure/bip32';

import type { Network } from '../shared/network.js';


const tronBase58 = base58check(sha256);
const TRON_PREFIX = 0x41;
/** Child indexes are non-hardened 31-bit numbers. */
export const MAX_ADDRESS_INDEX = 0x7fffffff;

export class InvalidExtendedKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidExtendedKeyError';
  }
}

/** Parses an account-level xpub; refuses private keys and anything that is not an extended public key. */
export function parseAccountXpub(xpub: string): HDKey {
  if (/^[a-z]prv/i.test(xpub)) throw new InvalidExtendedKeyError('an extended private key was given: configure the account xpub, never a private key');
  let key: HDKey;
  try {
    key = HDKey.fromExtendedKey(xpub);
  } catch (error) {
    throw new InvalidExtendedKeyError(`not a valid extended public key: ${(error as Error).message}`);
  }
  if (key.privateKey) throw new InvalidExtendedKeyError('an extended private key was given: configure the account xpub');
  if (key.depth !== 3) throw new InvalidExtendedKeyError(`expected an account-level xpub (depth 3, m/44'/coin'/0'), got depth ${key.depth}`);
  return key;
}

export function toChecksumAddress(id: Uint8Array): string {
  const hex = bytesToHex(id);
  const hash = bytesToHex(keccak_256(new TextEncoder().encode(hex)));
  let out = '0x';
  for (let i = 0; i < hex.length; i++) out += parseInt(hash[i]!, 16) >= 8 ? hex[i]!.toUpperCase() : hex[i];
  return out;
}

export function toTronAddress(id: Uint8Array): string {
  return tronBase58.encode(Uint8Array.from([TRON_PREFIX, ...id]));
}

/** The 20-byte account id behind a Tron base58 address (for matching chain logs). */
export function tronAddressToId(address: string): Uint8Array {
  const bytes = tronBase58.decode(address);
  if (bytes.length !== 21 || bytes[0] !== TRON_PREFIX) throw new Error(`not a Tron address: ${address}`);
  return bytes.subarray(1);
}

/**
 * BIP32 public child derivation (CKDpub): child = parent + IL·G, where IL ‖ IR = HMAC-SHA512(chain code,
 * compressed parent key ‖ index) and IR is the child's chain code. The point arithmetic is libsecp256k1's
 * (the `secp256k1` package): about 40 µs where JavaScript's base-point multiplication took 300, and
 * JavaScript's first one 100 ms more for its tables, at every process's and address thread's start.
 */
function externalChain(account: HDKey): { publicKey: Uint8Array; chainCode: Uint8Array } {
  const digest = createHmac('sha512', account.chainCode!).update(account.publicKey!).update(Buffer.alloc(4)).digest(); // index 0
  try {
    return { publicKey: secp256k1.publicKeyTweakAdd(account.publicKey!, digest.subarray(0, 32), true), chainCode: digest.subarray(32) };
  } catch {
    throw new InvalidExtendedKeyError('the xpub has no external chain (BIP32 child 0 yields no valid key)');
  }
}

/** Derives deposit addresses of one network from its account xpub. */
export function createAddressDeriver(network: Network, xpub: string): (index: number) => string {
  const account = externalChain(parseAccountXpub(xpub));
  const format = network === 'Tron' ? toTronAddress : toChecksumAddress;
  // Each address is the external chain's child `index`, derived as above.
  const chainCode = account.chainCode;
  const message = Buffer.alloc(37);
  message.set(account.publicKey, 0); // BIP32 hashes the compressed key
  // The parent point is decompressed once here, not per address (a square root saved on each).
  const parentPoint = secp256k1.publicKeyConvert(account.publicKey, false);
  return (index) => {
    if (!Number.isInteger(index) || index < 0 || index > MAX_ADDRESS_INDEX) throw new RangeError(`address index out of range: ${index}`);
    message.writeUInt32BE(index, 33);
    const tweak = createHmac('sha512', chainCode).update(message).digest().subarray(0, 32);
    let child: Uint8Array;
    try {
      child = secp256k1.publicKeyTweakAdd(parentPoint, tweak, false);
    } catch {
      // BIP32: such an index yields no key (probability below 2^-127); it is refused, never skipped silently.
      throw new RangeError(`address index ${index} yields no valid key`);
    }
    // The account id: the last 20 bytes of keccak256 of the uncompressed public key without its 0x04.
    return format(keccak_256(child.subarray(1)).subarray(12));
  };
}

/** True for a Tron base58check address or an Ethereum hex address (EIP-55 checked when mixed case). */
export function isAddress(network: Network, address: string): boolean {
  if (network === 'Tron') {
    try {
      return tronAddressToId(address).length === 20;
    } catch {
      return false;
    }
  }
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) return false;
  const hex = address.slice(2);
  if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
  return toChecksumAddress(Uint8Array.from(Buffer.from(hex, 'hex'))) === address;
}

/** The address in the form the platform stores its own: EIP-55 on Ethereum (any case given), Tron's as it is. */
export function canonicalAddress(network: Network, address: string): string {
  return network === 'Ethereum' ? toChecksumAddress(Uint8Array.from(Buffer.from(address.slice(2), 'hex'))) : address;
}

/**
 * Why `address` cannot receive a payment on `network`, or undefined when it can: not an address of the
 * network (a mistyped checksum included), or the zero address, which no one controls.
 */
export function payableAddressProblem(network: Network, address: string): string | undefined {
  if (!isAddress(network, address)) {
    if (network === 'Ethereum' && /^0x[0-9a-fA-F]{40}$/.test(address)) return 'is not a valid Ethereum address: its mixed case is not the EIP-55 checksum';
    return network === 'Tron' ? 'is not a valid Tron address (base58check T…)' : 'is not a valid Ethereum address (0x and 40 hex digits)';
  }
  const id = network === 'Tron' ? tronAddressToId(address) : Buffer.from(address.slice(2), 'hex');
  if (id.every((byte) => byte === 0)) return 'is the zero address, which no one controls';
  return undefined;
}
