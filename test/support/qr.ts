// Reads a QR code data URL back the way a wallet's scanner would (jsQR over the decoded PNG).
import jsQR from 'jsqr';
import { PNG } from 'pngjs';

export function decodeQr(dataUrl: string): string | undefined {
  const png = PNG.sync.read(Buffer.from(dataUrl.replace(/^data:image\/png;base64,/, ''), 'base64'));
  return jsQR(new Uint8ClampedArray(png.data), png.width, png.height)?.data;
}
