// What one client may hold of the server, as the servers people trust bound it (nginx's limit_conn and
// client_max_body_size, HAProxy's maxconn): connections per address and in total, and no more of a
// request's body read than the platform uses. Without them, about 20,000 idle connections from one
// address took every file descriptor of the process until the request timeout closed them, and one GET
// with an endless body was read (27 GiB) until it did (issue 50).
import { readFileSync } from 'node:fs';
import { BlockList, isIPv4, isIPv6, type Socket } from 'node:net';
import type { Server } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Counter } from 'prom-client';

export interface ConnectionLimits {
  /** Connections at once, all clients together (MAX_CONNECTIONS). */
  total: number;
  /** Connections at once from one address (MAX_CONNECTIONS_PER_ADDRESS); trusted proxies are not held to it. */
  perAddress: number;
}

/**
 * Files the process keeps for itself beside its connections: the database (a pool, or PGlite's files),
 * callback deliveries (128 at most), the address thread, logs.
 */
const RESERVED_DESCRIPTORS = 512;

/** The process's limit of open files (RLIMIT_NOFILE, soft; Node raises it to the hard one), where the system tells it. */
export function openFileLimit(): number | undefined {
  try {
    const line = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    return line === undefined || line === 'unlimited' ? undefined : Number(line);
  } catch {
    return undefined; // not Linux
  }
}

/** MAX_CONNECTIONS, lowered where the process may not open that many files beside its own. */
export function effectiveTotal(total: number, fileLimit = openFileLimit()): number {
  return fileLimit === undefined ? total : Math.max(1, Math.min(total, fileLimit - RESERVED_DESCRIPTORS));
}

/**
 * The address a connection counts against: an IPv4-mapped IPv6 address is its IPv4 one, and an IPv6
 * address is its /64, the network one subscriber is given (it holds 2^64 addresses to connect from).
 */
export function addressOf(remoteAddress: string | undefined): string | undefined {
  const address = unmapped(remoteAddress);
  if (address === undefined || !isIPv6(address)) return address;
  const [head = '', tail] = address.replace(/%.*$/, '').toLowerCase().split('::') as [string, string | undefined];
  const words = (part: string) => (part === '' ? [] : part.split(':'));
  const all = tail === undefined ? words(head) : [...words(head), ...Array<string>(8 - words(head).length - words(tail).length).fill('0'), ...words(tail)];
  return `${all.slice(0, 4).map((word) => word.replace(/^0+(?=.)/, '')).join(':')}::/64`;
}

/** An IPv4-mapped IPv6 address (`::ffff:127.0.0.1`, a dual-stack listener's) as its IPv4 address. */
function unmapped(address: string | undefined): string | undefined {
  return address?.toLowerCase().startsWith('::ffff:') && isIPv4(address.slice(7)) ? address.slice(7) : address;
}

/** The trusted proxies (IPs or CIDR ranges), whose connections carry many clients: not held to the per-address limit. */
function proxyList(trustedProxies: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of trustedProxies) {
    const [address, prefix] = entry.split('/') as [string, string | undefined];
    const type = isIPv6(address) ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

/**
 * Holds the server to the limits: a connection past either is closed as soon as it is accepted, before
 * a byte of it is read (the total by Node's maxConnections; the address's here, ahead of the HTTP
 * server's own listener), and counted in `refused`.
 */
export function limitConnections(server: Server, limits: ConnectionLimits, trustedProxies: readonly string[], refused: Counter<'limit'>): void {
  server.maxConnections = limits.total;
  server.on('drop', () => refused.inc({ limit: 'total' }));
  const proxies = proxyList(trustedProxies);
  const open = new Map<string, number>();
  server.prependListener('connection', (socket: Socket) => {
    const peer = unmapped(socket.remoteAddress);
    if (peer === undefined || proxies.check(peer, isIPv4(peer) ? 'ipv4' : 'ipv6')) return;
    const address = addressOf(peer)!;
    const count = open.get(address) ?? 0;
    if (count >= limits.perAddress) {
      refused.inc({ limit: 'per_address' });
      socket.destroy();
      return;
    }
    open.set(address, count + 1);
    socket.once('close', () => {
      const left = (open.get(address) ?? 1) - 1;
      if (left > 0) open.set(address, left);
      else open.delete(address);
    });
  });
}

/**
 * A response to a request whose body has not arrived in full closes the connection: the platform never
 * reads on through a body it does not use (a GET's, one refused before its end). Keeping the connection
 * would make Node read the rest, to find the next request, until the request timeout: one connection
 * pushed 27 GiB that way, and four made a merchant's reads ten times slower.
 */
export function closeAfterUnreadBodies(fastify: FastifyInstance): void {
  fastify.addHook('onSend', async (request, reply) => {
    if (!request.raw.complete) reply.header('Connection', 'close');
  });
}
