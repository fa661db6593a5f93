// Where callbacks may go: one classification of addresses, used when an order's callbackUrl is
// accepted and again on every delivery, after DNS, on the address the socket connects to (so a name
// that resolves, or later re-resolves, to an internal address is refused too).
import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import type { Mode } from '../merchants/secrets.js';

/** IPv4 ranges that are not the public internet (RFC 6890 and its updates). */
const NON_PUBLIC_V4 = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], // private
  ['100.64.0.0', 10], // shared (carrier-grade NAT)
  ['127.0.0.0', 8], // loopback
  ['169.254.0.0', 16], // link-local (cloud metadata services live here)
  ['192.0.0.0', 24], // IETF protocol assignments
  ['192.0.2.0', 24], ['198.51.100.0', 24], ['203.0.113.0', 24], // documentation
  ['192.88.99.0', 24], // 6to4 relay anycast (deprecated)
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) NON_PUBLIC_V4.addSubnet(network, prefix, 'ipv4');

/**
 * IPv6 is judged by an allow-list: only global unicast (2000::/3) is public, less the special-purpose
 * blocks inside it (IANA IPv6 Special-Purpose Address Registry). Everything else is loopback,
 * unspecified, link-local, unique local, site-local, multicast, discard (100::/64), the dummy prefix
 * (100:0:0:1::/64), SRv6 SIDs (5f00::/16), SIIT's IPv4-translated ::ffff:0:0:0/96, local-use NAT64
 * (64:ff9b:1::/48) or not assigned at all: none of it is a merchant's public receiver. The forms that
 * embed an IPv4 address (IPv4-mapped, NAT64 64:ff9b::/96, 6to4) are judged by that address first.
 */
const NON_PUBLIC_GLOBAL_V6 = new BlockList();
for (const [network, prefix] of [
  ['2001::', 23], // IETF protocol assignments: Teredo (2001::/32), benchmarking, ORCHID, …
  ['2001:db8::', 32], ['3fff::', 20], // documentation
] as const) NON_PUBLIC_GLOBAL_V6.addSubnet(network, prefix, 'ipv6');

const isGlobalUnicast = (words: number[]) => (words[0]! & 0xe000) === 0x2000;

/** The eight 16-bit words of an IPv6 address (with or without an IPv4 tail). */
function ipv6Words(ip: string): number[] {
  let text = ip.toLowerCase().replace(/%.*$/, ''); // a zone index does not change the address
  const v4Tail = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4Tail) {
    const [a, b, c, d] = v4Tail.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4Tail.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const words = (part: string) => (part === '' ? [] : part.split(':').map((w) => parseInt(w, 16)));
  if (tail === undefined) return words(head);
  const [front, back] = [words(head), words(tail)];
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

const ipv4Of = (high: number, low: number) => [high >> 8, high & 255, low >> 8, low & 255].join('.');

/** The IPv4 address an IPv6 address stands for: IPv4-mapped, NAT64 (64:ff9b::/96) and 6to4 (2002::/16). */
function embeddedIpv4(words: number[]): string | undefined {
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  if (zeros(0, 5) && words[5] === 0xffff) return ipv4Of(words[6]!, words[7]!);
  if (words[0] === 0x64 && words[1] === 0xff9b && zeros(2, 6)) return ipv4Of(words[6]!, words[7]!);
  if (words[0] === 0x2002) return ipv4Of(words[1]!, words[2]!);
  return undefined;
}

/** True for every address that is not on the public internet, in any of its IPv4 and IPv6 forms. */
export function isNonPublicAddress(ip: string): boolean {
  const version = isIP(ip.replace(/%.*$/, ''));
  if (version === 4) return NON_PUBLIC_V4.check(ip, 'ipv4');
  if (version !== 6) return false;
  const words = ipv6Words(ip);
  const v4 = embeddedIpv4(words);
  if (v4) return NON_PUBLIC_V4.check(v4, 'ipv4');
  if (!isGlobalUnicast(words)) return true;
  return NON_PUBLIC_GLOBAL_V6.check(words.map((w) => w.toString(16)).join(':'), 'ipv6');
}

/** This machine's own addresses: 127.0.0.0/8 and ::1, and 127.0.0.0/8 IPv4-mapped (not SIIT, NAT64 or 6to4: those leave the machine). */
export function isLoopbackAddress(ip: string): boolean {
  const version = isIP(ip.replace(/%.*$/, ''));
  if (version === 4) return ip.startsWith('127.');
  if (version !== 6) return false;
  const words = ipv6Words(ip);
  const zeros = (from: number, to: number) => words.slice(from, to).every((w) => w === 0);
  return (zeros(0, 7) && words[7] === 1) || (zeros(0, 5) && words[5] === 0xffff && words[6]! >> 8 === 127);
}

/** `localhost`, its subdomains, with or without the root's trailing dot. */
function isLocalhostName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
}

export interface CallbackPolicy {
  /** Live mode: https only (unless ALLOW_PRIVATE_CALLBACKS, for tests whose receiver is local http). */
  requireHttps: boolean;
  /** Private and loopback receivers allowed: only when the operator sets ALLOW_PRIVATE_CALLBACKS, in either mode. */
  allowPrivate: boolean;
  /** Receivers on this machine allowed (loopback addresses, `localhost`) though other private ones are not: a loopback-only sandbox. */
  allowLoopback?: boolean;
  /**
   * Live mode: a name that can only resolve inside a network (one label, `intranet`; `printer.local`,
   * `shop.internal`, `metadata.google.internal`) is refused when the URL is given, not accepted and
   * failed at delivery. Names reserved never to resolve anywhere (`*.example`, `*.test`, `*.invalid`:
   * the docs' `https://merchant.example/…`) are accepted, and their delivery fails without a query.
   */
  publicNamesOnly: boolean;
}

/** `allowLoopback` counts in the sandbox only (config.callbacks.allowLoopback): live mode opens loopback with allowPrivate alone. */
export function callbackPolicy(mode: Mode, allowPrivate: boolean, allowLoopback = false): CallbackPolicy {
  const live = mode === 'live' && !allowPrivate;
  return { requireHttps: live, allowPrivate, allowLoopback: allowPrivate || (mode === 'sandbox' && allowLoopback), publicNamesOnly: live };
}

/** The refusal of a private, loopback or reserved host (callbackUrlProblem). */
export const PRIVATE_DESTINATION = 'must not name a private, loopback, link-local or reserved address';

/** Why a callback URL is refused under this policy, or undefined when it is acceptable. */
export function callbackUrlProblem(text: string, policy: CallbackPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'must be an absolute URL';
  }
  if (url.username || url.password) return 'must not carry a user name or password';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return 'must be an https URL';
  if (policy.requireHttps && url.protocol !== 'https:') return 'must be an https URL in live mode';
  if (policy.allowPrivate) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (policy.allowLoopback && (isLocalhostName(host) || isLoopbackAddress(host))) return undefined;
  if (isLocalhostName(host) || isNonPublicAddress(host)) return PRIVATE_DESTINATION;
  if (policy.publicNamesOnly && isIP(host) === 0 && isInternalName(host)) return PRIVATE_DESTINATION;
  return undefined;
}

/**
 * Names that are never on the public internet (RFC 2606, 6761, 6762, 7686, 8375, and ICANN's
 * `.internal`): a callback to one is failed without a DNS query, so no resolver (and no tarpit behind
 * one) is asked about it.
 */
const SPECIAL_USE_SUFFIXES = ['test', 'example', 'invalid', 'localhost', 'local', 'onion', 'internal', 'alt', 'home.arpa'];

/**
 * Suffixes that name hosts inside a network, where some resolver may well answer for them: besides the
 * special-use ones, `.home`, `.corp` and `.mail`, which ICANN will never delegate (name collisions,
 * 2018), `.localdomain`, the whole of `.arpa` (reverse DNS: `in-addr.arpa`, `ip6.arpa`; `home.arpa`),
 * and the service-discovery domains of Kubernetes (`.svc`, `.cluster.local`) and Consul (`.consul`).
 */
const INTERNAL_SUFFIXES = ['local', 'internal', 'localhost', 'localdomain', 'arpa', 'lan', 'home', 'corp', 'mail', 'intranet', 'private', 'svc', 'consul', 'onion', 'alt'];

/** A name that resolves, if at all, only inside a network: one label (`intranet`), or an internal suffix. */
export function isInternalName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, '');
  return !name.includes('.') || INTERNAL_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}

export function isSpecialUseName(host: string): boolean {
  const name = host.toLowerCase().replace(/\.+$/, '');
  return SPECIAL_USE_SUFFIXES.some((suffix) => name === suffix || name.endsWith(`.${suffix}`));
}

export class SpecialUseNameError extends Error {
  constructor(host: string) {
    super(`callback host ${host} is a special-use name, never on the public internet: not looked up`);
  }
}

/**
 * A name that resolves to a non-public address. Its message is the one a name that does not resolve at
 * all gets (delivery-errors.ts): a merchant's deliveries must not tell what or whether the platform's
 * resolver answers for a name inside its network (issue 50: "resolves to 127.0.0.1" was an oracle).
 */
export class NonPublicDestinationError extends Error {
  constructor(host: string, readonly address: string) {
    super(`callback host ${host} has no public address`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * The `lookup` of a callback's request under the policy: a special-use name is never looked up (with
 * private or loopback destinations allowed, `localhost` still is: it names this machine, from /etc/hosts); a name
 * is resolved by DNS; unless private destinations are allowed, one that resolves to any non-public
 * address is refused. Node skips lookup for IP literals: callbackUrlProblem checks those.
 */
export function callbackLookup(policy: CallbackPolicy) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const resolvable = isLocalhostName(hostname) || !isSpecialUseName(hostname);
    if (policy.allowPrivate && resolvable) return void dnsLookup(hostname, options, callback as never);
    publicOnlyLookup(hostname, options, callback, policy.allowLoopback);
  };
}

/**
 * A `lookup` that refuses a special-use name without a query, and a name resolving to any non-public
 * address; with `allowLoopback`, `localhost` is looked up and loopback addresses pass (no other private one).
 */
export function publicOnlyLookup(hostname: string, options: LookupOptions, callback: LookupCallback, allowLoopback = false): void {
  if (isSpecialUseName(hostname) && !(allowLoopback && isLocalhostName(hostname))) return callback(new SpecialUseNameError(hostname), []);
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const refused = addresses.find((a) => isNonPublicAddress(a.address) && !(allowLoopback && isLoopbackAddress(a.address)));
    if (refused) return callback(new NonPublicDestinationError(hostname, refused.address), []);
    if (options.all) return callback(null, addresses);
    callback(null, addresses[0]!.address, addresses[0]!.family);
  });
}
