// The hot wallet that pays withdrawals (issue 47): its private key, read from a file the operator
// names (ETHEREUM_PAYOUT_KEY_FILE, TRON_PAYOUT_KEY_FILE), lives only in a #private field of a
// HotWallet. Nothing else of the platform sees it: the wallet shows its address and signs digests,
// and the key never reaches a log line, an error message, JSON or util.inspect.
import { access, open, stat } from 'node:fs/promises';
import { constants, type Stats } from 'node:fs';
import { inspect } from 'node:util';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { toChecksumAddress, toTronAddress } from '../addresses/derivation.js';
import type { Network } from '../shared/network.js';

/** A key file holds 64 hex digits and maybe 0x and a newline; anything much larger is not a key file. */
const MAX_KEY_FILE_BYTES = 1024;

export class HotWalletKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'HotWalletKeyError';
  }
}

/** A secp256k1 signature with its recovery bit: what Ethereum (yParity) and Tron (v = 27 + recovery) need. */
export interface RecoverableSignature {
  /** 32 bytes, big-endian. */
  r: Uint8Array;
  /** 32 bytes, big-endian, in the lower half of the curve order (as both chains require). */
  s: Uint8Array;
  recovery: 0 | 1;
}

/**
 * The payout key of one network. `address` is the account it pays from (EIP-55 for Ethereum, base58check
 * `T…` for Tron); `signDigest` signs a 32-byte hash (RFC 6979: the same digest always gives the same
 * signature, so a transaction signed twice after a crash is the same transaction).
 */
export class HotWallet {
  readonly #network: Network;
  readonly #address: string;
  readonly #publicKey: Uint8Array;
  readonly #secretKey: Uint8Array;

  /** Use loadHotWallet; this is for keys that do not come from a file (tests). */
  constructor(network: Network, secretKey: Uint8Array) {
    if (secretKey.length !== 32 || !secp256k1.utils.isValidSecretKey(secretKey)) {
      throw new HotWalletKeyError('not a valid secp256k1 private key (32 bytes, between 1 and the curve order less one)');
    }
    this.#network = network;
    this.#secretKey = Uint8Array.from(secretKey);
    this.#publicKey = secp256k1.getPublicKey(this.#secretKey, false);
    const id = keccak_256(this.#publicKey.subarray(1)).subarray(12);
    this.#address = network === 'Tron' ? toTronAddress(id) : toChecksumAddress(id);
  }

  get network(): Network {
    return this.#network;
  }

  get address(): string {
    return this.#address;
  }

  signDigest(digest: Uint8Array): RecoverableSignature {
    if (!(digest instanceof Uint8Array) || digest.length !== 32) throw new TypeError('a digest to sign is 32 bytes');
    const signed = secp256k1.Signature.fromBytes(secp256k1.sign(digest, this.#secretKey, { prehash: false, format: 'recovered' }), 'recovered');
    const recovery = signed.recovery;
    // Recovery ids 2 and 3 (r beyond the curve order) have a chance of about 2^-127 and neither chain takes them.
    if (recovery !== 0 && recovery !== 1) throw new Error('the signature has no usable recovery id; sign again with another digest');
    // A signature computed wrongly (a fault in the machine) can reveal the key: check it recovers our own
    // key before it leaves this object, as libsecp256k1's users are told to.
    const recovered = signed.recoverPublicKey(digest).toBytes(false);
    if (!equalBytes(recovered, this.#publicKey)) throw new Error('a signature failed its own check and was discarded');
    const compact = signed.toBytes('compact');
    return { r: compact.slice(0, 32), s: compact.slice(32, 64), recovery };
  }

  toJSON(): { network: Network; address: string } {
    return { network: this.#network, address: this.#address };
  }

  toString(): string {
    return `HotWallet(${this.#network} ${this.#address})`;
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

/** How errors name a key file: its network and path, never its content. */
const described = (network: Network, keyFile: string) => `the ${network} payout key file ${JSON.stringify(keyFile)}`;

/**
 * What is wrong with a key file as stat shows it, or undefined: it must be a regular file of the user
 * running the platform that neither the group nor others may read or write (mode & 0o077 = 0, as ssh
 * asks of a private key). Another user's file is refused even if this one (root) can read it: its owner
 * could change it or read the key.
 */
function fileProblem(stat: Stats, where: string): string | undefined {
  if (!stat.isFile()) return `${where} is not a regular file`;
  if ((stat.mode & 0o077) !== 0) {
    return `${where} is readable or writable by others (mode ${(stat.mode & 0o777).toString(8).padStart(4, '0')}): allow its owner only, e.g. chmod 600`;
  }
  const uid = process.getuid?.();
  if (uid !== undefined && stat.uid !== uid) return `${where} belongs to another user (uid ${stat.uid}, the platform runs as uid ${uid}): chown it to the user that runs the platform`;
  return undefined;
}

/**
 * The checks of a key file's kind, owner and mode, without reading it: `partner-api serve` makes them
 * before anything starts (jobs.ts), so that a bad file stops the start at once. loadHotWallet makes
 * them again on the file it opens.
 */
export async function checkKeyFile(network: Network, keyFile: string): Promise<void> {
  const where = described(network, keyFile);
  let stats: Stats;
  try {
    stats = await stat(keyFile);
    await access(keyFile, constants.R_OK); // may this user open it (without opening it)
  } catch (error) {
    throw new HotWalletKeyError(`${where} cannot be opened (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const problem = fileProblem(stats, where);
  if (problem) throw new HotWalletKeyError(problem);
}

/**
 * Reads a payout key file: refused unless it passes checkKeyFile's checks, holding a secp256k1 private
 * key as 64 hex digits (0x and surrounding whitespace allowed). The checks are made on the file opened,
 * not on its path, so a file swapped in between cannot slip by. Errors name the file, never its content.
 */
export async function loadHotWallet(network: Network, keyFile: string): Promise<HotWallet> {
  const where = described(network, keyFile);
  let handle;
  try {
    handle = await open(keyFile, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (error) {
    throw new HotWalletKeyError(`${where} cannot be opened (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  let bytes: Buffer | undefined;
  try {
    const opened = await handle.stat();
    const problem = fileProblem(opened, where);
    if (problem) throw new HotWalletKeyError(problem);
    if (opened.size > MAX_KEY_FILE_BYTES) throw new HotWalletKeyError(`${where} is ${opened.size} bytes: a key file holds one hex key`);
    bytes = Buffer.alloc(MAX_KEY_FILE_BYTES + 1);
    const { bytesRead } = await handle.read(bytes, 0, bytes.length, 0);
    if (bytesRead > MAX_KEY_FILE_BYTES) throw new HotWalletKeyError(`${where} grew while it was read: a key file holds one hex key`);
    const secretKey = parseHexKey(bytes.subarray(0, bytesRead), where);
    try {
      return new HotWallet(network, secretKey);
    } finally {
      secretKey.fill(0);
    }
  } finally {
    bytes?.fill(0);
    await handle.close();
  }
}

/** The key's bytes, read from ASCII hex without making a string of it (a string cannot be wiped). */
function parseHexKey(text: Uint8Array, where: string): Uint8Array {
  let start = 0;
  let end = text.length;
  while (start < end && isWhitespace(text[start]!)) start++;
  while (end > start && isWhitespace(text[end - 1]!)) end--;
  if (end - start >= 2 && text[start] === 0x30 && (text[start + 1] === 0x78 || text[start + 1] === 0x58)) start += 2; // 0x, 0X
  if (end - start !== 64) throw new HotWalletKeyError(`${where} does not hold a private key: expected 64 hex digits (0x allowed), found ${end - start} characters`);
  const key = new Uint8Array(32);
  for (let i = 0; i < 32; i++) {
    const high = hexValue(text[start + 2 * i]!);
    const low = hexValue(text[start + 2 * i + 1]!);
    if (high < 0 || low < 0) {
      key.fill(0);
      throw new HotWalletKeyError(`${where} does not hold a private key: a character that is not a hex digit`);
    }
    key[i] = high * 16 + low;
  }
  if (!secp256k1.utils.isValidSecretKey(key)) {
    key.fill(0);
    throw new HotWalletKeyError(`${where} does not hold a valid secp256k1 private key (zero, or not below the curve order)`);
  }
  return key;
}

function isWhitespace(byte: number): boolean {
  return byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d;
}

function hexValue(byte: number): number {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x61 + 10;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x41 + 10;
  return -1;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a[i]! ^ b[i]!;
  return difference === 0;
}
