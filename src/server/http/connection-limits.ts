// What one client may hold of the server, as the servers people trust bound it (nginx's limit_conn and
// client_max_body_size, HAProxy's maxconn): connections per address and in total, and no more of a
// request's body read than the platform uses. Without them, about 20,000 idle connections from one
// address took every file descriptor of the process until the request timeout closed them, and one GET
// with an endless body was read (27 GiB) until it did (issue 50). Many addresses (20,000 of 127.0.0.0/8;
// an IPv6 /48 has far more) filled the total with idle connections and a fresh client was hung up: a
// network is bounded too (an IPv4 /24, an IPv6 /48), and at the total the longest-idle connection makes
// way for the new one, as HAProxy's and nginx's idle-connection reuse do (issue 57).
import { readFileSync } from 'node:fs';
import { BlockList, isIPv4, isIPv6, type Socket } from 'node:net';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { Counter } from 'prom-client';

export interface ConnectionLimits {
  /** Connections at once, all clients together (MAX_CONNECTIONS). */
  total: number;
  /** Connections at once from one address (MAX_CONNECTIONS_PER_ADDRESS); trusted proxies are not held to it. */
  perAddress: number;
  /** Connections at once from one network, an IPv4 /24 or an IPv6 /48 (MAX_CONNECTIONS_PER_NETWORK); not trusted proxies either. */
  perNetwork: number;
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

/** The network a connection counts against besides its address: an IPv4 address's /24, an IPv6 address's /48 (a site). */
export function networkOf(remoteAddress: string | undefined): string | undefined {
  const address = addressOf(remoteAddress);
  if (address === undefined) return undefined;
  if (isIPv4(address)) return `${address.split('.').slice(0, 3).join('.')}.0/24`;
  return `${address.split(':').slice(0, 3).join(':')}::/48`;
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

/** Counts of open connections by a key (an address, a network). */
class Counts {
  private readonly open = new Map<string, number>();
  full(key: string, limit: number): boolean {
    return (this.open.get(key) ?? 0) >= limit;
  }
  add(key: string): void {
    this.open.set(key, (this.open.get(key) ?? 0) + 1);
  }
  remove(key: string): void {
    const left = (this.open.get(key) ?? 1) - 1;
    if (left > 0) this.open.set(key, left);
    else this.open.delete(key);
  }
}

/**
 * The server's connections, and which of them are idle (no request in progress: between requests, or
 * not yet through their first request's headers), longest idle first.
 */
class OpenConnections {
  private readonly all = new Set<Socket>();
  /** Insertion order is idleness order: a connection moves to the end each time it becomes idle. */
  private readonly idle = new Set<Socket>();
  private readonly inFlight = new Map<Socket, number>();
  get size(): number {
    return this.all.size;
  }
  accept(socket: Socket): void {
    this.all.add(socket);
    this.idle.add(socket);
  }
  requestStarted(socket: Socket): void {
    this.inFlight.set(socket, (this.inFlight.get(socket) ?? 0) + 1);
    this.idle.delete(socket);
  }
  requestEnded(socket: Socket): void {
    const left = (this.inFlight.get(socket) ?? 1) - 1;
    if (left > 0) return void this.inFlight.set(socket, left);
    this.inFlight.delete(socket);
    if (this.all.has(socket)) this.idle.add(socket); // to the end: idle from now
  }
  /** Closes the longest-idle connection; false when every one has a request in progress. */
  closeLongestIdle(): boolean {
    const [oldest] = this.idle;
    if (!oldest) return false;
    this.forget(oldest);
    oldest.destroy();
    return true;
  }
  forget(socket: Socket): void {
    this.all.delete(socket);
    this.idle.delete(socket);
    this.inFlight.delete(socket);
  }
}

/**
 * Holds the server to the limits: a connection past its address's or its network's is closed as soon as
 * it is accepted, before a byte of it is read (here, ahead of the HTTP server's own listener), and
 * counted in `refused`. At the total, the longest-idle connection is closed to make way for the new one
 * (counted as `idle_closed`); only when every connection has a request in progress is the new one
 * closed (`total`). The closed idle one loses no answer: it had no request in progress.
 */
export function limitConnections(server: Server, limits: ConnectionLimits, trustedProxies: readonly string[], refused: Counter<'limit'>): void {
  const proxies = proxyList(trustedProxies);
  const [byAddress, byNetwork] = [new Counts(), new Counts()];
  const connections = new OpenConnections();
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    const socket = request.socket;
    connections.requestStarted(socket);
    response.once('close', () => connections.requestEnded(socket));
  });
  server.prependListener('connection', (socket: Socket) => {
    const peer = unmapped(socket.remoteAddress);
    const proxy = peer === undefined || proxies.check(peer, isIPv4(peer) ? 'ipv4' : 'ipv6');
    const [address, network] = proxy ? [undefined, undefined] : [addressOf(peer)!, networkOf(peer)!];
    const refusal = address === undefined ? undefined : byAddress.full(address, limits.perAddress) ? 'per_address' : byNetwork.full(network!, limits.perNetwork) ? 'per_network' : undefined;
    if (refusal !== undefined) {
      refused.inc({ limit: refusal });
      return void socket.destroy();
    }
    if (connections.size >= limits.total) {
      if (!connections.closeLongestIdle()) {
        refused.inc({ limit: 'total' });
        return void socket.destroy();
      }
      refused.inc({ limit: 'idle_closed' });
    }
    connections.accept(socket);
    if (address !== undefined) (byAddress.add(address), byNetwork.add(network!));
    socket.once('close', () => {
      connections.forget(socket);
      if (address !== undefined) (byAddress.remove(address), byNetwork.remove(network!));
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
