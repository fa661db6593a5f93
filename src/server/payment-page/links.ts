// The payment page's link is a capability URL: /pay/<order uuid>/<token>, where the token is an HMAC
// of the uuid under a key derived from the master key (secrets.ts), cut to 128 bits. Only the platform
// can make a token, so the link opens its one order and no other (a uuid alone, or another order's
// token, opens nothing), and nothing is stored for it. The uuid stays in the path so that a page read
// is one lookup by primary key after the token checks, without a query for a link that is made up.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isUuid } from '../shared/uuid.js';

export const PAGE_PREFIX = '/pay';
const TOKEN_BYTES = 16;
/** 16 bytes as unpadded base64url. */
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{22}$/;

export class PaymentLinks {
  /** `baseUrl` is read when a link is made: the listen address is known only once the server listens. */
  constructor(
    private readonly key: Buffer,
    private readonly baseUrl: () => string,
  ) {}

  private token(uuid: string): string {
    return createHmac('sha256', this.key).update(uuid.toLowerCase()).digest().subarray(0, TOKEN_BYTES).toString('base64url');
  }

  /** The page's path for the order (also the base of its live updates). */
  path(uuid: string): string {
    return `${PAGE_PREFIX}/${uuid.toLowerCase()}/${this.token(uuid)}`;
  }

  /** The order's paymentUrl. */
  url(uuid: string): string {
    return this.baseUrl() + this.path(uuid);
  }

  /** True only for the token this platform made for this uuid; compared in constant time. */
  verify(uuid: string, token: string): boolean {
    if (!isUuid(uuid) || !TOKEN_SHAPE.test(token)) return false;
    // Compared as text: two strings can decode to the same bytes (the last character's spare bits).
    return timingSafeEqual(Buffer.from(this.token(uuid)), Buffer.from(token));
  }
}

/** A request URL for logs: a page link's token is a capability, so it is left out. */
export function withoutToken(url: string): string {
  return url.startsWith(`${PAGE_PREFIX}/`) ? url.replace(/^(\/pay\/[^/?]*\/)[^/?]+/, '$1…') : url;
}

/** The address the server listens on, as a base URL (the sandbox's default public URL). */
export function listenUrl(address: string | { address: string; family: string; port: number } | null): string {
  if (address === null || typeof address === 'string') return 'http://127.0.0.1';
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}
