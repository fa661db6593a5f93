// Opaque page cursors: a position in a walk (a few strings), readable only by the platform and only for
// the merchant and the walk it was made for. The position is encrypted and authenticated (AES-256-GCM),
// with the merchant and the walk's filters (the scope) as associated data: a cursor shows nothing of
// what it holds (a feed cursor held the outbox's global counters, so a merchant saw how many events all
// others had between two of its own: issue 50), and any change, truncation, another merchant's cursor
// or another walk's is refused. Every cursor has the same length, whatever its counters' digits.
import { createCipheriv, createDecipheriv, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/** The contract's bound on a cursor (components/schemas/NextCursor.yaml). */
const MAX_CURSOR_LENGTH = 512;
/**
 * A cursor's random part: 12 bytes pick the key it is sealed with (derived from the cursor key), 12 are
 * GCM's nonce, as XAES-256-GCM extends the nonce: GCM's own 96-bit random nonce is safe for 2^32
 * messages under one key, which a busy platform's pages would pass within weeks; this, for 2^80 and more.
 */
const SALT_BYTES = 12;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** Positions are padded (with JSON's white space) to this many bytes: the longest, a feed's, is 62. */
const PADDED_BYTES = 64;

export class CursorCodec {
  constructor(private readonly key: Buffer) {}

  /** The key one cursor is sealed with: HMAC-SHA256 of its salt under the cursor key, apart from the legacy MAC's inputs. */
  private sealingKey(salt: Buffer): Buffer {
    return createHmac('sha256', this.key).update('cursor-aes-256-gcm\0').update(salt).digest();
  }

  encode(subject: string, scope: string, position: readonly string[]): string {
    const json = JSON.stringify(position);
    const plain = Buffer.alloc(Math.max(PADDED_BYTES, Buffer.byteLength(json)), ' ');
    plain.write(json);
    const random = randomBytes(SALT_BYTES + NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.sealingKey(random.subarray(0, SALT_BYTES)), random.subarray(SALT_BYTES), { authTagLength: TAG_BYTES });
    cipher.setAAD(associatedData(subject, scope));
    const sealed = Buffer.concat([cipher.update(plain), cipher.final(), cipher.getAuthTag()]);
    // Two parts, as the contract's pattern has cursors (and as the legacy ones were).
    return `${random.toString('base64url')}.${sealed.toString('base64url')}`;
  }

  /** The position a page's cursor holds, of one of `lengths`; none without a cursor; CursorRefused for one not made for this subject and scope. */
  position(subject: string, scope: string, cursor: string | undefined, lengths: readonly number[]): string[] | undefined {
    if (cursor === undefined) return undefined;
    const position = this.decode(subject, scope, cursor, lengths);
    if (!position) throw new CursorRefused();
    return position;
  }

  /** The position, of one of `lengths`, or undefined for anything this codec did not make for this subject and scope. */
  decode(subject: string, scope: string, cursor: string, lengths: readonly number[]): string[] | undefined {
    if (cursor.length > MAX_CURSOR_LENGTH) return undefined;
    const [first, second, ...rest] = cursor.split('.');
    if (first === undefined || second === undefined || rest.length > 0) return undefined;
    const [head, tail] = [Buffer.from(first, 'base64url'), Buffer.from(second, 'base64url')];
    // Each part must be the base64url of its bytes exactly: no other spelling of the same cursor passes.
    if (head.toString('base64url') !== first || tail.toString('base64url') !== second) return undefined;
    const json = tail.length === LEGACY_MAC_BYTES ? this.openLegacy(subject, scope, first, tail) : this.open(subject, scope, head, tail);
    if (json === undefined) return undefined;
    try {
      const position: unknown = JSON.parse(json);
      const valid = Array.isArray(position) && lengths.includes(position.length) && position.every((part) => typeof part === 'string');
      return valid ? (position as string[]) : undefined;
    } catch {
      return undefined;
    }
  }

  private open(subject: string, scope: string, random: Buffer, sealed: Buffer): string | undefined {
    if (random.length !== SALT_BYTES + NONCE_BYTES || sealed.length < PADDED_BYTES + TAG_BYTES) return undefined;
    const tag = sealed.subarray(sealed.length - TAG_BYTES);
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.sealingKey(random.subarray(0, SALT_BYTES)), random.subarray(SALT_BYTES), { authTagLength: TAG_BYTES });
      decipher.setAAD(associatedData(subject, scope));
      decipher.setAuthTag(tag);
      return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return undefined; // the tag does not match: changed, another merchant's or another walk's
    }
  }

  /**
   * A cursor issued before cursors were encrypted (`payload.mac`: base64url JSON and a 128-bit HMAC over
   * it, the subject and the scope), so that walks and feeds read across the upgrade go on. It shows what
   * it showed when issued, and nothing new: the platform issues none any more.
   */
  private openLegacy(subject: string, scope: string, payload: string, mac: Buffer): string | undefined {
    const expected = createHmac('sha256', this.key).update(`${subject}\0${scope}\0${payload}`).digest().subarray(0, LEGACY_MAC_BYTES);
    if (!timingSafeEqual(mac, expected)) return undefined;
    return Buffer.from(payload, 'base64url').toString('utf8');
  }
}

/** Bytes of the legacy cursors' MAC. */
const LEGACY_MAC_BYTES = 16;

/** What a cursor is bound to: the merchant and the walk (neither is in the cursor, so neither is shown). */
function associatedData(subject: string, scope: string): Buffer {
  return Buffer.from(`${subject}\0${scope}`);
}

/** The scope of a walk: its kind and its filters, in a stable order (limit and cursor are not filters). */
export function walkScope(kind: string, filters: Record<string, string | number | undefined>): string {
  const entries = Object.entries(filters)
    .filter(([, value]) => value !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return `${kind}?${JSON.stringify(entries)}`;
}

/** A cursor this platform did not issue to this merchant for this walk, or changed: the API's 422 naming `cursor`. */
export class CursorRefused extends Error {
  constructor() {
    super('was not issued to this API key for these filters, or it was changed');
  }
}

/** A feed's cursor whose walk reaches back past what the pruning removed: the API's 410 cursor_expired. */
export class CursorExpired extends Error {
  constructor(readonly retentionDays: number) {
    super(`The events after this cursor are no longer kept (${retentionDays} days); list your orders to reconcile, then read the feed without a cursor.`);
  }
}
