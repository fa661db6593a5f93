// Where callbacks may go. The contract bounds the URL's shape; live mode also refuses plain http and
// hosts that name a private, loopback or link-local address (re-checked after DNS at delivery).
import { BlockList, isIP } from 'node:net';
import type { Mode } from '../secrets.js';

/** Every range that is not the public internet: loopback, private, shared, link-local, multicast, reserved. */
const NON_PUBLIC = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) NON_PUBLIC.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) {
  NON_PUBLIC.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address inside an IPv4-mapped or NAT64 IPv6 address, in either notation. */
function embeddedIpv4(ip: string): string | undefined {
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/i.exec(ip);
  if (!hex) return undefined;
  const [high, low] = [parseInt(hex[1]!, 16), parseInt(hex[2]!, 16)];
  return [high >> 8, high & 255, low >> 8, low & 255].join('.');
}

/** True for loopback, private, link-local, shared, multicast and reserved addresses (v4 and v6). */
export function isNonPublicAddress(ip: string): boolean {
  const version = isIP(ip);
  if (version === 4) return NON_PUBLIC.check(ip, 'ipv4');
  if (version !== 6) return false;
  const v4 = embeddedIpv4(ip);
  return v4 ? NON_PUBLIC.check(v4, 'ipv4') : NON_PUBLIC.check(ip, 'ipv6');
}

/**
 * Why a callback URL is refused in this mode, or undefined when it is acceptable. `allowPrivate` (the
 * ALLOW_PRIVATE_CALLBACKS switch, for tests on one machine) lets live mode accept local receivers.
 */
export function callbackUrlProblem(text: string, mode: Mode, allowPrivate = false): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (mode === 'sandbox' || allowPrivate) return undefined;
  if (url.protocol !== 'https:') return 'must be an https URL in live mode';
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === 'localhost' || host.endsWith('.localhost') || isNonPublicAddress(host)) {
    return 'must not name a private, loopback or link-local address in live mode';
  }
  return undefined;
}
