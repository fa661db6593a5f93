import { HDKey } from '@scure/bip32';
import { describe, expect, it } from 'vitest';
import {
  createAddressDeriver,
  InvalidExtendedKeyError,
  toChecksumAddress,
  toTronAddress,
  tronAddressToId,
} from '../../../src/server/addresses/derivation.js';
import { hdVectors } from '../../fixtures/vectors.js';

describe('deposit addresses (vectors/hd-addresses.json)', () => {
  for (const wallet of hdVectors.wallets) {
    for (const network of ['Ethereum', 'Tron'] as const) {
      it(`reproduces ${network} addresses of "${wallet.mnemonic.slice(0, 20)}…"`, () => {
        const derive = createAddressDeriver(network, wallet[network].xpub);
        expect(wallet[network].addresses.map((_, index) => derive(index))).toEqual(wallet[network].addresses);
      });
    }
  }

  it('writes EIP-55 checksums', () => {
    for (const address of hdVectors.eip55) {
      const id = Uint8Array.from(Buffer.from(address.slice(2), 'hex'));
      expect(toChecksumAddress(id)).toBe(address);
    }
  });

  it('converts Tron addresses to and from hex', () => {
    for (const { base58, hex } of Object.values(hdVectors.tron)) {
      const id = Uint8Array.from(Buffer.from(hex.slice(2), 'hex'));
      expect(toTronAddress(id)).toBe(base58);
      expect(Buffer.from(tronAddressToId(base58)).toString('hex')).toBe(hex.slice(2));
    }
  });

  it('refuses an extended private key, a wrong depth and junk', () => {
    const master = HDKey.fromMasterSeed(new Uint8Array(32).fill(7));
    const account = master.derive("m/44'/60'/0'");
    expect(() => createAddressDeriver('Ethereum', account.privateExtendedKey)).toThrow(/private key/);
    expect(() => createAddressDeriver('Ethereum', master.publicExtendedKey)).toThrow(/depth 3/);
    expect(() => createAddressDeriver('Tron', 'xpub-nonsense')).toThrow(InvalidExtendedKeyError);
    expect(createAddressDeriver('Ethereum', account.publicExtendedKey)(0)).toMatch(/^0x[0-9a-fA-F]{40}$/);
  });

  it('refuses indexes outside the non-hardened range', () => {
    const derive = createAddressDeriver('Tron', hdVectors.wallets[0]!.Tron.xpub);
    for (const index of [-1, 0x80000000, 1.5]) expect(() => derive(index)).toThrow(RangeError);
  });
});
