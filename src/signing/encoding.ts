// Byte helpers on the platform's own primitives (TextEncoder, btoa/atob), so that the signing code
// runs unchanged in Node, browsers, Deno and edge runtimes.

const utf8 = new TextEncoder();

export type Bytes = Uint8Array<ArrayBuffer>;

export function toBytes(data: string | Uint8Array): Bytes {
  if (typeof data === 'string') return utf8.encode(data) as Bytes;
  return new Uint8Array(data) as Bytes;
}

export function concatBytes(...parts: Uint8Array[]): Bytes {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));

export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += HEX[byte];
  return out;
}

/** Parses lowercase or uppercase hex; undefined when the text is not whole bytes of hex. */
export function fromHex(text: string): Bytes | undefined {
  if (text.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(text)) return undefined;
  const out = new Uint8Array(text.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = parseInt(text.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function toBase64(bytes: Uint8Array): string {
  let binary = '';
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary);
}

/** Parses standard base64; undefined when the text is not base64. */
export function fromBase64(text: string): Bytes | undefined {
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text) || text.length % 4 !== 0) return undefined;
  const binary = atob(text);
  const out = new Uint8Array(binary.length);
  for (let i = 0; i < binary.length; i++) out[i] = binary.charCodeAt(i);
  return out;
}
