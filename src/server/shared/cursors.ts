// Opaque page cursors: a position in a walk (a few strings), readable only as a whole and only by the
// merchant and the walk it was made for. The position is plain base64url JSON; a MAC over it, the
// merchant and the walk's filters (the scope) makes any change, truncation, another merchant's cursor
// or another walk's refused, so a cursor never shows what its holder could not list anyway and never
// sends a walk somewhere it did not reach.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** Bytes of the MAC kept: 128 bits, beyond guessing. */
const MAC_BYTES = 16;
/** The contract's bound on a cursor (components/schemas/NextCursor.yaml). */
const MAX_CURSOR_LENGTH = 512;

export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  private mac(subject: string, scope: string, payload: string): Buffer {
    return createHmac('sha256', this.key).update(`${subject}\0${scope}\0${payload}`).digest().subarray(0, MAC_BYTES);
  }

  encode(subject: string, scope: string, position: readonly string[]): string {
    const payload = Buffer.from(JSON.stringify(position)).toString('base64url');
    return `${payload}.${this.mac(subject, scope, payload).toString('base64url')}`;
  }

  /** The position, of one of `lengths`, or undefined for anything this codec did not make for this subject and scope. */
  decode(subject: string, scope: string, cursor: string, lengths: readonly number[]): string[] | undefined {
    if (cursor.length > MAX_CURSOR_LENGTH) return undefined;
    const [payload, mac, ...rest] = cursor.split('.');
    if (payload === undefined || mac === undefined || rest.length > 0) return undefined;
    const given = Buffer.from(mac, 'base64url');
    const expected = this.mac(subject, scope, payload);
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return undefined;
    try {
      const position: unknown = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
      const valid = Array.isArray(position) && lengths.includes(position.length) && position.every((part) => typeof part === 'string');
      return valid ? (position as string[]) : undefined;
    } catch {
      return undefined;
    }
  }
}

/** The scope of a walk: its kind and its filters, in a stable order (limit and cursor are not filters). */
export function walkScope(kind: string, filters: Record<string, string | number | undefined>): string {
  const entries = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return `${kind}?${JSON.stringify(entries)}`;
}
