// The payment page's link is a capability URL: /pay/<order uuid>/<token>, where the token is an HMAC
// of the uuid under a key derived from the master key (secrets.ts), cut to 128 bits. Only the platform
// can make a token, so the link opens its one order and no other (a uuid alone, or another order's
// token, opens nothing), and nothing is stored for it. The uuid stays in the path so that a page read
// is one lookup by primary key after the token checks, without a query for a link that is made up.
import { createHash, hash, timingSafeEqual } from 'node:crypto';
import { isLowercaseUuid, isUuid } from '../shared/uuid.js';

export const PAGE_PREFIX = '/pay';
/** 16 bytes as unpadded base64url. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{22}$/;
const UUID_LENGTH = 36;
/** SHA-256's block: HMAC's pads are as long (RFC 2104). */
const BLOCK = 64;
const BASE64URL = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
const SLASH = 0x2f;

/**
 * HMAC-SHA256 (RFC 2104) of a lowercase uuid, written out with node:crypto's one-shot `hash`, as a
 * token: a list page makes 100 of them. createHmac made one native object a token (3.2-4.6 µs each),
 * and the garbage collector then freed them in its pauses: 1,800 of them in a scavenge of a walk of
 * pages, 0.9 ms of its 2 ms. This takes 1.1-1.2 µs and leaves a few short strings (bench/README.md).
 * The pads are made once; each token writes its uuid, then the inner hash, into them: synchronous, so
 * no other token can come between. links.test.ts checks it against createHmac.
 */
class UuidMac {
  private readonly inner = Buffer.alloc(BLOCK + UUID_LENGTH);
  private readonly outer = Buffer.alloc(BLOCK + 32);

  constructor(key: Buffer) {
    const block = key.length > BLOCK ? createHash('sha256').update(key).digest() : key;
    for (let i = 0; i < BLOCK; i++) {
      this.inner[i] = (block[i] ?? 0) ^ 0x36;
      this.outer[i] = (block[i] ?? 0) ^ 0x5c;
    }
  }

  /** The MAC's first 16 bytes as unpadded base64url. */
  token(uuid: string): string {
    if (!isUuid(uuid)) throw new RangeError('a payment link is made for a uuid');
    const mac = this.mac(uuid.toLowerCase());
    return mac.slice(0, 21) + lastCharacter(mac);
  }

  /** The token, written into `buffer` at `at` (TOKEN_LENGTH bytes), of a uuid in lowercase (PaymentLinks.writeUrl checks it). */
  writeToken(uuid: string, buffer: Buffer, at: number): void {
    const mac = this.mac(uuid);
    buffer.write(mac, at, 21, 'latin1');
    buffer[at + 21] = lastCharacter(mac).charCodeAt(0);
  }

  /** The whole MAC of a lowercase uuid, as base64url. */
  private mac(uuid: string): string {
    this.inner.write(uuid, BLOCK, 'latin1');
    // 'binary' is latin1, one character a byte: the inner hash is written back as its 32 bytes.
    this.outer.write(hash('sha256', this.inner, 'binary'), BLOCK, 'latin1');
    return hash('sha256', this.outer, 'base64url');
  }
}

/** 16 bytes are 21 base64 characters and 2 bits: the 22nd character keeps those bits, the rest are 0. */
function lastCharacter(mac: string): string {
  return BASE64URL[BASE64URL.indexOf(mac[21]!) & 0b110000]!;
}

const TOKEN_LENGTH = 22;
/** What a base URL holds that a JSON string would have to escape, or that is not one byte a character. */
const NOT_JSON_SAFE_ASCII = /[^\x20-\x21\x23-\x5b\x5d-\x7e]/;

export class PaymentLinks {
  private readonly mac: UuidMac;
  /** The last base URL checkedBase passed. */
  private checked: string | undefined;

  /** `baseUrl` is read when a link is made: the listen address is known only once the server listens. */
  constructor(
    key: Buffer,
    private readonly baseUrl: () => string,
  ) {
    this.mac = new UuidMac(key);
  }

  /** The page's path for the order (also the base of its live updates). */
  path(uuid: string): string {
    return `${PAGE_PREFIX}/${uuid.toLowerCase()}/${this.mac.token(uuid)}`;
  }

  /** The order's paymentUrl. */
  url(uuid: string): string {
    return this.baseUrl() + this.path(uuid);
  }

  /** The length of every paymentUrl now, in bytes: what writeUrl writes. */
  urlBytes(): number {
    return this.checkedBase().length + PAGE_PREFIX.length + 1 + UUID_LENGTH + 1 + TOKEN_LENGTH;
  }

  /**
   * url(uuid) written into `buffer` at `at`, as the bytes of a JSON string's inside (a list page writes
   * 100 with no string made of them); returns where it ends. The uuid is in lowercase, as PostgreSQL
   * writes one.
   */
  writeUrl(uuid: string, buffer: Buffer, at: number): number {
    if (!isLowercaseUuid(uuid)) throw new RangeError('a payment link is written for a uuid in lowercase');
    at += buffer.write(this.checkedBase(), at, 'latin1');
    at += buffer.write(PAGE_PREFIX, at, 'latin1');
    buffer[at++] = SLASH;
    at += buffer.write(uuid, at, 'latin1');
    buffer[at++] = SLASH;
    this.mac.writeToken(uuid, buffer, at);
    return at + TOKEN_LENGTH;
  }

  /**
   * The base URL, checked to be written as it is: a URL's serialization (config.ts) is ASCII, with
   * quotes and backslashes percent-encoded, but the check is made once for every base it returns.
   */
  private checkedBase(): string {
    const base = this.baseUrl();
    if (base !== this.checked) {
      if (NOT_JSON_SAFE_ASCII.test(base)) throw new RangeError(`the payment pages' base URL is not JSON-safe ASCII: ${JSON.stringify(base)}`);
      this.checked = base;
    }
    return base;
  }

  /** True only for the token this platform made for this uuid; compared in constant time. */
  verify(uuid: string, token: string): boolean {
    if (!isUuid(uuid) || !TOKEN_SHAPE.test(token)) return false;
    // Compared as text: two strings can decode to the same bytes (the last character's spare bits).
    return timingSafeEqual(Buffer.from(this.mac.token(uuid)), Buffer.from(token));
  }
}

/**
 * A request URL for logs: a page link's token is a capability, so it is left out. Whatever the path's
 * spelling: percent-escapes (`/%70ay/…` opens the page), doubled slashes and any case (`//pay/…`,
 * `/pay//…`, `/PAY/…` answer 404, and were logged with the token, issue 50) are read as the router
 * might, and a path that then names a page has its third segment, the token, replaced. Dot segments
 * (`/pay/./UUID/TOKEN`, `/x/../pay/…`) and backslashes are resolved as a browser or a proxy would (RFC
 * 3986, 5.2.4): the token is found wherever a normalising hop would have taken the path (issue 57).
 */
export function withoutToken(url: string): string {
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  const segments = withoutDotSegments(decodedPath(path).replace(/\\/g, '/').replace(/\/{2,}/g, '/').split('/'));
  if (segments[1]?.toLowerCase() !== PAGE_PREFIX.slice(1) || segments.length < 4) return url;
  segments[3] = '…';
  return segments.join('/') + (queryAt === -1 ? '' : url.slice(queryAt));
}

/** A path's segments (the first empty: the leading slash) with `.` dropped and `..` taking the one before away. */
function withoutDotSegments(segments: string[]): string[] {
  const kept: string[] = [];
  for (const segment of segments) {
    if (segment === '.') continue;
    if (segment === '..') {
      if (kept.length > 1) kept.pop();
      continue;
    }
    kept.push(segment);
  }
  return kept;
}

/** A path with its percent-escapes decoded, twice over at most (`%2570` is `%70` is `p`); as it is where one is malformed. */
function decodedPath(path: string): string {
  let decoded = path;
  for (let round = 0; round < 2 && decoded.includes('%'); round++) {
    try {
      decoded = decodeURIComponent(decoded);
    } catch {
      break;
    }
  }
  return decoded;
}

/** The address the server listens on, as a base URL (the sandbox's default public URL). */
export function listenUrl(address: string | { address: string; family: string; port: number } | null): string {
  if (address === null || typeof address === 'string') return 'http://127.0.0.1';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
