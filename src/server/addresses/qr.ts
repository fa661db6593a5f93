// The QR code of a deposit address as a PNG data URL. The module matrix comes from `qr` (paulmillr's
// encoder: one byte-mode segment at error-correction level M; it scores the eight masks over packed
// bit rows, about 25 µs a symbol where qrcode took about 200). The PNG is written here, 1-bit
// grayscale through node:zlib, because drawing it as an RGBA image through pngjs cost about 2.5 ms.
import { crc32, deflateSync } from 'node:zlib';
import encodeQR from 'qr';

/** Quiet zone around the symbol, in modules, and pixels per module (scanlines() writes a module as a nibble). */
const MARGIN = 2;
const SCALE = 4;
const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

function pngChunk(type: string, data: Buffer): Buffer {
  const chunk = Buffer.alloc(12 + data.length);
  chunk.writeUInt32BE(data.length, 0);
  chunk.write(type, 4, 'latin1');
  data.copy(chunk, 8);
  chunk.writeUInt32BE(crc32(chunk.subarray(4, 8 + data.length)), 8 + data.length);
  return chunk;
}

/**
 * One PNG scanline per pixel row: a filter byte (0) and the row's bits, 1 = white (grayscale, depth 1).
 * At 4 pixels a module, a module is one half of a byte: its 4 × 4 pixels are one nibble in 4 rows.
 */
function scanlines(modules: boolean[][]): { side: number; raw: Buffer } {
  const side = modules.length * SCALE;
  const stride = 1 + Math.ceil(side / 8);
  const raw = Buffer.alloc(stride * side);
  modules.forEach((row, moduleRow) => {
    const first = moduleRow * SCALE * stride + 1;
    row.forEach((dark, column) => {
      if (dark) return;
      const at = first + (column >> 1);
      const light = column & 1 ? 0x0f : 0xf0;
      for (let pixelRow = 0; pixelRow < SCALE; pixelRow++) raw[at + pixelRow * stride]! |= light;
    });
  });
  return { side, raw };
}

export function addressQr(address: string): string {
  // The matrix comes with its quiet zone (border), dark modules true.
  const { side, raw } = scanlines(encodeQR(address, 'raw', { ecc: 'medium', encoding: 'byte', border: MARGIN }));
  const header = Buffer.alloc(13);
  header.writeUInt32BE(side, 0);
  header.writeUInt32BE(side, 4);
  header[8] = 1; // bit depth
  header[9] = 0; // grayscale
  // A 512-byte window holds many rows of a symbol this size: smaller output, and less for zlib to set up.
  const png = Buffer.concat([PNG_SIGNATURE, pngChunk('IHDR', header), pngChunk('IDAT', deflateSync(raw, { windowBits: 9 })), pngChunk('IEND', Buffer.alloc(0))]);
  return `data:image/png;base64,${png.toString('base64')}`;
}
