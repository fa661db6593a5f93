// The address QR code: a 1-bit grayscale PNG that decodes to the address, module for module the
// symbol qrcode encodes (one byte-mode segment) at error-correction level M, with a 2-module quiet
// zone at 4 pixels a module.
import jsQR from 'jsqr';
import { PNG } from 'pngjs';
import QRCode from 'qrcode';
import { describe, expect, it } from 'vitest';
import { hdVectors } from '../fixtures/vectors.js';
import { addressQr } from '../../src/server/qr.js';

const addresses = [...hdVectors.wallets[0]!.Tron.addresses, ...hdVectors.wallets[0]!.Ethereum.addresses];

describe('addressQr', () => {
  it.each(addresses)('draws %s as a symbol that decodes to it', (address) => {
    const url = addressQr(address);
    expect(url).toMatch(/^data:image\/png;base64,/);
    const bytes = Buffer.from(url.slice('data:image/png;base64,'.length), 'base64');
    expect([bytes[24], bytes[25]]).toEqual([1, 0]); // IHDR: bit depth 1, grayscale
    const png = PNG.sync.read(bytes);
    expect(jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data).toBe(address);

    const { modules } = QRCode.create([{ data: Buffer.from(address, 'latin1'), mode: 'byte' }], { errorCorrectionLevel: 'M' });
    expect(png.width).toBe((modules.size + 4) * 4);
    const darkAt = (x: number, y: number) => png.data[(y * png.width + x) * 4] === 0;
    for (let row = -2; row < modules.size + 2; row++) {
      for (let column = -2; column < modules.size + 2; column++) {
        const inside = row >= 0 && row < modules.size && column >= 0 && column < modules.size;
        const expected = inside && modules.get(row, column) === 1;
        // Every pixel of the module, not only its centre.
        for (let dy = 0; dy < 4; dy++) for (let dx = 0; dx < 4; dx++) if (darkAt((column + 2) * 4 + dx, (row + 2) * 4 + dy) !== expected) throw new Error(`module ${row},${column} of ${address}`);
      }
    }
  });
});
