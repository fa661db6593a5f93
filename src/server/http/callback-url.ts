// Where callbacks may go. The contract bounds the URL's shape; live mode also refuses plain http and
// hosts that name a private, loopback or link-local address (re-checked after DNS at delivery).
import { isIP } from 'node:net';
import type { Mode } from '../secrets.js';

const PRIVATE_V4: [number, number][] = [
  [0x00000000, 8], [0x0a000000, 8], [0x64400000, 10], [0x7f000000, 8], [0xa9fe0000, 16],
  [0xac100000, 12], [0xc0000000, 24], [0xc0a80000, 16], [0xc6120000, 15], [0xe0000000, 4], [0xf0000000, 4],
];

function ipv4ToInt(ip: string): number {
  return ip.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

/** True for loopback, private, link-local, shared, multicast and reserved addresses (v4 and v6). */
export function isNonPublicAddress(ip: string): boolean {
  const version = isIP(ip);
  if (version === 4) {
    const n = ipv4ToInt(ip);
    return PRIVATE_V4.some(([base, bits]) => (n >>> (32 - bits)) === (base >>> (32 - bits)));
  }
  if (version === 6) {
    const lower = ip.toLowerCase();
    const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
    if (mapped) return isNonPublicAddress(mapped[1]!);
    return lower === '::' || lower === '::1' || /^f[cd]/.test(lower) || /^fe[89ab]/.test(lower) || /^ff/.test(lower);
  }
  return false;
}

/** Why a callback URL is refused in this mode, or undefined when it is acceptable. */
export function callbackUrlProblem(text: string, mode: Mode): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (mode === 'sandbox') return undefined;
  if (url.protocol !== 'https:') return 'must be an https URL in live mode';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || isNonPublicAddress(host)) {
    return 'must not name a private, loopback or link-local address in live mode';
  }
  return undefined;
}
