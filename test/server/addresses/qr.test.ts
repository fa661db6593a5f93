// The address QR code: a 1-bit grayscale PNG that decodes to the address, module for module the
// symbol a second encoder (qrcode) draws for one byte-mode segment at error-correction level M with
// one of the eight masks, with a 2-module quiet zone at 4 pixels a module. Which mask is the
// encoder's choice: implementations of the standard's penalty scoring differ, and every mask decodes.
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { hdVectors } from '../../fixtures/vectors.js';
import { createAddressDeriver } from '../../../src/server/addresses/derivation.js';
import { addressQr } from '../../../src/server/addresses/qr.js';
import { decodeQr } from '../../support/qr.js';

const addresses = [...hdVectors.wallets[0]!.Tron.addresses, ...hdVectors.wallets[0]!.Ethereum.addresses];

describe('addressQr', () => {
  it.each(addresses)('draws %s as a symbol that decodes to it', (address) => {
    const url = addressQr(address);
    expect(url).toMatch(/^data:image\/png;base64,/);
    const bytes = Buffer.from(url.slice('data:image/png;base64,'.length), 'base64');
    expect([bytes[24], bytes[25]]).toEqual([1, 0]); // IHDR: bit depth 1, grayscale
    const png = PNG.sync.read(bytes);
    expect(decodeQr(url)).toBe(address);

    const symbolWithMask = (maskPattern: number) => QRCode.create([{ data: Buffer.from(address, 'latin1'), mode: 'byte' }], { errorCorrectionLevel: 'M', maskPattern: maskPattern as QRCode.QRCodeMaskPattern }).modules;
    expect(png.width).toBe((symbolWithMask(0).size + 4) * 4);
    const darkAt = (x: number, y: number) => png.data[(y * png.width + x) * 4] === 0;
    const drawn = (modules: QRCode.BitMatrix) => {
      for (let row = -2; row < modules.size + 2; row++) {
        for (let column = -2; column < modules.size + 2; column++) {
          const inside = row >= 0 && row < modules.size && column >= 0 && column < modules.size;
          const expected = inside && modules.get(row, column) === 1;
          // Every pixel of the module, not only its centre.
          for (let dy = 0; dy < 4; dy++) for (let dx = 0; dx < 4; dx++) if (darkAt((column + 2) * 4 + dx, (row + 2) * 4 + dy) !== expected) return false;
        }
      }
      return true;
    };
    expect([0, 1, 2, 3, 4, 5, 6, 7].filter((mask) => drawn(symbolWithMask(mask)))).toHaveLength(1);
  });

  it('draws symbols that decode for the first 100 deposit addresses of each network', () => {
    const wallet = hdVectors.wallets[0]!;
    for (const network of ['Tron', 'Ethereum'] as const) {
      const derive = createAddressDeriver(network, wallet[network].xpub);
      const addressesOfNetwork = Array.from({ length: 100 }, (_, index) => derive(index));
      expect(addressesOfNetwork.filter((address) => decodeQr(addressQr(address)) !== address)).toEqual([]);
    }
  });
});
