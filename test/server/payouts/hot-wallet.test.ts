// The hot wallet's key file: what is refused and why, and that the key shows nowhere once loaded.
import { execFileSync } from 'node:child_process';
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { format, inspect } from 'node:util';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { TronWeb, utils as tronUtils } from 'tronweb';
import { afterAll, describe, expect, it } from 'vitest';
import { checkKeyFile, HotWallet, HotWalletKeyError, loadHotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { keyLeaks } from '../../support/key-leak.js';

/** anvil's (and hardhat's) first default account: a key whose address everybody knows. */
const ANVIL_KEY = 'ac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80';
const ANVIL_ADDRESS = '0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266';
/** secp256k1's group order: a key must be below it. */
const CURVE_ORDER = 'fffffffffffffffffffffffffffffffebaaedce6af48a03bbfd25e8cd0364141';

/** The user nobody (and its group): the owner of another user's file. */
const NOBODY = 65534;

const dir = mkdtempSync(join(tmpdir(), 'hot-wallet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function keyFile(content: string, mode = 0o600): string {
  const path = join(dir, `key-${++files}`);
  writeFileSync(path, content);
  chmodSync(path, mode);
  return path;
}

async function refusal(promise: Promise<unknown>): Promise<HotWalletKeyError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(HotWalletKeyError);
  return error as HotWalletKeyError;
}

describe('loadHotWallet', () => {
  it('reads a key file of 64 hex digits into the wallet of its address, on either network', async () => {
    const ethereum = await loadHotWallet('Ethereum', keyFile(`${ANVIL_KEY}\n`));
    expect(ethereum.network).toBe('Ethereum');
    expect(ethereum.address).toBe(ANVIL_ADDRESS);
    const tron = await loadHotWallet('Tron', keyFile(ANVIL_KEY, 0o400));
    expect(tron.network).toBe('Tron');
    // tronweb derives the Tron address of the same key on its own.
    expect(tron.address).toBe(TronWeb.address.fromPrivateKey(ANVIL_KEY));
    expect(tron.address).toMatch(/^T[1-9A-HJ-NP-Za-km-z]{33}$/);
  });

  it('takes 0x or 0X, either case and surrounding whitespace', async () => {
    for (const content of [`0x${ANVIL_KEY}`, `0X${ANVIL_KEY.toUpperCase()}`, `  \t${ANVIL_KEY.toUpperCase()}\r\n\n`]) {
      expect((await loadHotWallet('Ethereum', keyFile(content))).address).toBe(ANVIL_ADDRESS);
    }
  });

  it('follows a symbolic link and judges the file it names (as a mounted secret is laid out)', async () => {
    const target = keyFile(ANVIL_KEY);
    const link = join(dir, 'link-to-key');
    symlinkSync(target, link);
    expect((await loadHotWallet('Ethereum', link)).address).toBe(ANVIL_ADDRESS);
    chmodSync(target, 0o644);
    expect((await refusal(loadHotWallet('Ethereum', link))).message).toMatch(/readable or writable by others \(mode 0644\)/);
  });

  it('refuses a file that the group or others may read or write, naming its mode and the fix', async () => {
    for (const mode of [0o640, 0o604, 0o620, 0o602, 0o610, 0o601, 0o666]) {
      const path = keyFile(ANVIL_KEY, mode);
      const error = await refusal(loadHotWallet('Tron', path));
      expect(error.message).toContain(`the Tron payout key file "${path}" is readable or writable by others (mode 0${mode.toString(8)})`);
      expect(error.message).toContain('chmod 600');
      expect(keyLeaks(error.message, ANVIL_KEY)).toEqual([]);
    }
  });

  it('refuses what is not a regular file: a directory, a FIFO, a missing path', async () => {
    const directory = join(dir, 'a-directory');
    mkdirSync(directory, { mode: 0o700 });
    expect((await refusal(loadHotWallet('Ethereum', directory))).message).toMatch(/is not a regular file$/);
    const fifo = join(dir, 'a-fifo');
    execFileSync('mkfifo', ['-m', '600', fifo]);
    // Opened without blocking: a FIFO nobody writes to must not hang the platform's start.
    expect((await refusal(loadHotWallet('Ethereum', fifo))).message).toMatch(/is not a regular file$/);
    expect((await refusal(loadHotWallet('Ethereum', join(dir, 'missing')))).message).toMatch(/cannot be opened \(ENOENT\)$/);
  });

  // Tests run as root, which may open any file: only the owner check refuses another user's.
  it.skipIf(process.getuid?.() !== 0)("refuses a file of another user even where this one may read it, naming both uids", async () => {
    const path = keyFile(ANVIL_KEY);
    chownSync(path, NOBODY, NOBODY);
    const error = await refusal(loadHotWallet('Ethereum', path));
    expect(error.message).toBe(`the Ethereum payout key file "${path}" belongs to another user (uid ${NOBODY}, the platform runs as uid 0): chown it to the user that runs the platform`);
    expect((await refusal(checkKeyFile('Ethereum', path))).message).toBe(error.message);
  });

  it('is checked at start by checkKeyFile as loadHotWallet checks it, from its kind, owner and mode alone (its content unread)', async () => {
    await expect(checkKeyFile('Ethereum', keyFile('not a key at all'))).resolves.toBeUndefined();
    await expect(checkKeyFile('Tron', keyFile(ANVIL_KEY, 0o400))).resolves.toBeUndefined();
    const shared = keyFile(ANVIL_KEY, 0o644);
    expect((await refusal(checkKeyFile('Ethereum', shared))).message).toBe((await refusal(loadHotWallet('Ethereum', shared))).message);
    expect((await refusal(checkKeyFile('Ethereum', dir))).message).toMatch(/is not a regular file$/);
    expect((await refusal(checkKeyFile('Ethereum', join(dir, 'missing')))).message).toMatch(/cannot be opened \(ENOENT\)$/);
  });

  it('refuses content that is not one valid secp256k1 private key, without quoting it', async () => {
    const cases: [string, RegExp][] = [
      ['', /expected 64 hex digits \(0x allowed\), found 0 characters/],
      [ANVIL_KEY.slice(0, 63), /found 63 characters/],
      [`${ANVIL_KEY}00`, /found 66 characters/],
      [`${ANVIL_KEY}\n${ANVIL_KEY}`, /found 129 characters/],
      [`${ANVIL_KEY.slice(0, 63)}g`, /a character that is not a hex digit/],
      [`0x${ANVIL_KEY.slice(0, 62)} 1`, /a character that is not a hex digit/],
      ['0'.repeat(64), /not hold a valid secp256k1 private key/],
      [CURVE_ORDER, /not hold a valid secp256k1 private key/],
      ['f'.repeat(64), /not hold a valid secp256k1 private key/],
      [`xprv${'a'.repeat(60)}`, /a character that is not a hex digit/],
    ];
    for (const [content, reason] of cases) {
      const error = await refusal(loadHotWallet('Ethereum', keyFile(content)));
      expect(error.message).toMatch(reason);
      const secretPart = content.replace(/^0x/, '').slice(0, 16);
      if (secretPart.length >= 8) expect(error.message.toLowerCase()).not.toContain(secretPart.toLowerCase());
    }
    expect((await refusal(loadHotWallet('Ethereum', keyFile('a'.repeat(2000))))).message).toMatch(/is 2000 bytes: a key file holds one hex key/);
  });
});

describe('a HotWallet', () => {
  const wallet = new HotWallet('Ethereum', hexToBytes(ANVIL_KEY));

  it('shows its network and address and nothing of its key: no own property, JSON, inspect, format, String', () => {
    expect(Object.keys(wallet)).toEqual([]);
    expect(Object.getOwnPropertyNames(wallet)).toEqual([]);
    expect(JSON.parse(JSON.stringify(wallet))).toEqual({ network: 'Ethereum', address: ANVIL_ADDRESS });
    const shown = [
      JSON.stringify(wallet),
      JSON.stringify({ wallet }),
      inspect(wallet),
      inspect(wallet, { showHidden: true, depth: Infinity, customInspect: false }),
      inspect({ nested: [wallet] }, { showHidden: true, depth: Infinity }),
      format('%o %O %s %j', wallet, wallet, wallet, wallet),
      String(wallet),
      `${wallet}`,
      JSON.stringify(structuredClone(wallet)),
    ];
    expect(keyLeaks(shown, ANVIL_KEY)).toEqual([]);
    expect(inspect(wallet)).toBe(`HotWallet(Ethereum ${ANVIL_ADDRESS})`);
  });

  it('is what the key-leak guard finds nothing in, and the guard finds the key in every form a log line could show it', () => {
    const bytes = Buffer.from(ANVIL_KEY, 'hex');
    const forms = [
      `key=${ANVIL_KEY}`,
      `{"key":"0x${ANVIL_KEY.toUpperCase()}"}`,
      `0X${ANVIL_KEY}`,
      inspect(bytes),
      inspect(Uint8Array.from(bytes)),
      inspect({ secret: [...bytes] }),
      JSON.stringify([...bytes]),
      bytes.toString('base64'),
      bytes.toString('base64url'),
    ];
    for (const form of forms) expect(keyLeaks(['an innocent line', form], ANVIL_KEY), form).toHaveLength(1);
    expect(keyLeaks(`first line\nsecond with ${ANVIL_KEY}\nthird`, `0x${ANVIL_KEY}`)).toEqual([`second with ${ANVIL_KEY}`]);
    const other = bytesToHex(sha256(hexToBytes(ANVIL_KEY)));
    expect(keyLeaks([other, ANVIL_KEY.slice(0, 63), inspect(wallet), ANVIL_ADDRESS], ANVIL_KEY)).toEqual([]);
  });

  it('keeps no reference to the bytes it was given: wiping them later changes nothing', () => {
    const bytes = hexToBytes(ANVIL_KEY);
    const own = new HotWallet('Ethereum', bytes);
    bytes.fill(0);
    const digest = sha256(new TextEncoder().encode('after the wipe'));
    expect(own.signDigest(digest)).toEqual(wallet.signDigest(digest));
  });

  it('signs a digest as tronweb does (RFC 6979, low s), and the signature recovers its address', () => {
    for (const text of ['payout 1', 'payout 2', 'a third digest']) {
      const digest = sha256(new TextEncoder().encode(text));
      const { r, s, recovery } = wallet.signDigest(digest);
      expect(r).toHaveLength(32);
      expect(s).toHaveLength(32);
      const ours = `${bytesToHex(r)}${bytesToHex(s)}${(27 + recovery).toString(16)}`;
      expect(ours).toBe(tronUtils.crypto.ECKeySign(digest, hexToBytes(ANVIL_KEY)).toLowerCase());
      expect(BigInt(`0x${bytesToHex(s)}`) <= BigInt(`0x${CURVE_ORDER}`) / 2n).toBe(true);
      expect(tronUtils.crypto.ecRecover(bytesToHex(digest), ours).toLowerCase()).toBe(`41${ANVIL_ADDRESS.slice(2).toLowerCase()}`);
      expect(wallet.signDigest(digest)).toEqual({ r, s, recovery });
    }
  });

  it('signs 32-byte digests only', () => {
    expect(() => wallet.signDigest(new Uint8Array(31))).toThrow(TypeError);
    expect(() => wallet.signDigest(new Uint8Array(33))).toThrow(TypeError);
    expect(() => wallet.signDigest('00'.repeat(32) as unknown as Uint8Array)).toThrow(TypeError);
  });

  it('refuses key bytes that are not a key, without quoting them', () => {
    for (const bytes of [new Uint8Array(32), hexToBytes(CURVE_ORDER), new Uint8Array(31).fill(1), new Uint8Array(33).fill(1)]) {
      expect(() => new HotWallet('Tron', bytes)).toThrow(HotWalletKeyError);
    }
  });
});
