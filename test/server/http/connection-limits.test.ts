// What one client may hold of the server (issue 50, items 1 and 7; issue 57, item 1): connections per
// address, per network and in total (MAX_CONNECTIONS_PER_ADDRESS, MAX_CONNECTIONS_PER_NETWORK,
// MAX_CONNECTIONS), the ones past an address's or a network's closed as soon as accepted, the longest-idle
// one closed at the total for a new one, and no body read on past what the platform uses. Every address
// here is loopback (127.0.0.0/8).
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressOf, effectiveTotal, networkOf } from '../../../src/server/http/connection-limits.js';
import { signRequest } from '../../../src/signing/index.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform.js';

const PER_ADDRESS = 20;
const PER_NETWORK = 30;
const TOTAL = 60;

interface Held {
  socket: Socket;
  closed: boolean;
}

describe('connection limits and unread bodies', () => {
  let t: TestPlatform;
  let port: number;
  const held: Held[] = [];
  beforeAll(async () => {
    t = await startTestPlatform('pglite', { env: { MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS), MAX_CONNECTIONS_PER_NETWORK: String(PER_NETWORK), MAX_CONNECTIONS: String(TOTAL) } });
    port = Number(new URL(t.baseUrl).port);
  });
  afterAll(async () => {
    held.forEach((h) => h.socket.destroy());
    await t?.close();
  });

  /** `count` connections from `from` that send nothing; after `settleMs`, how many the server left open. */
  async function idle(from: string, count: number, settleMs = 500): Promise<Held[]> {
    const opened = await Promise.all(
      Array.from({ length: count }, () => new Promise<Held>((resolve) => {
        const entry: Held = { socket: connect({ port, host: '127.0.0.1', localAddress: from }), closed: false };
        entry.socket.on('error', () => {});
        entry.socket.on('close', () => (entry.closed = true));
        entry.socket.on('connect', () => resolve(entry));
        entry.socket.on('close', () => resolve(entry));
      })),
    );
    held.push(...opened);
    await new Promise((resolve) => setTimeout(resolve, settleMs));
    return opened.filter((entry) => !entry.closed);
  }

  /** A GET from `from` (signed as the merchant's): its status and body, or the error that ended it. */
  async function get(from: string, path: string): Promise<{ status: number | string; body: string }> {
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = await signRequest({ secret: t.merchant.apiSecret, timestamp, method: 'GET', target: path, body: '' });
    return new Promise((resolve) => {
      const request = httpRequest({ host: '127.0.0.1', port, path, localAddress: from, agent: false, headers: { 'X-Api-Key': t.merchant.apiKey, 'X-Timestamp': String(timestamp), 'X-Signature': signature } }, (response) => {
        let body = '';
        response.on('data', (chunk) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode!, body }));
      });
      request.on('error', (error) => resolve({ status: (error as Error).message, body: '' }));
      request.end();
    });
  }
  const signedRead = async (from: string) => (await get(from, '/partner/v1/platforms/orders?limit=1')).status;

  const release = (entries: Held[]) => Promise.all(entries.map((entry) => new Promise<void>((resolve) => (entry.closed ? resolve() : (entry.socket.once('close', () => resolve()), entry.socket.destroy())))));

  it(`holds one address to ${PER_ADDRESS} connections, closing the rest at once, while another address is served`, async () => {
    const open = await idle('127.0.0.1', 100);
    try {
      expect(open).toHaveLength(PER_ADDRESS);
      expect(await signedRead('127.0.0.2')).toBe(200);
      expect(await signedRead('127.0.0.1')).toBe('socket hang up'); // its own address is at its limit
      const metrics = (await get('127.0.0.3', '/metrics')).body;
      expect(metrics).toMatch(new RegExp(`partner_http_connections_refused_total\\{limit="per_address"\\} (8[1-9]|9\\d)`));
    } finally {
      await release(open);
    }
    await new Promise((resolve) => setTimeout(resolve, 100)); // the server sees the closes
    expect(await signedRead('127.0.0.1')).toBe(200);
  });

  it(`holds a network (an IPv4 /24) to ${PER_NETWORK} connections, while another network is served`, async () => {
    const open = [...(await idle('127.0.5.1', PER_ADDRESS, 0)), ...(await idle('127.0.5.2', PER_ADDRESS))];
    try {
      expect(open).toHaveLength(PER_NETWORK);
      expect(await signedRead('127.0.5.3')).toBe('socket hang up'); // a third address of the same /24
      expect(await signedRead('127.0.6.1')).toBe(200);
      const metrics = (await get('127.0.6.2', '/metrics')).body;
      expect(metrics).toMatch(/partner_http_connections_refused_total\{limit="per_network"\} (1[1-9]|[2-9]\d)/);
    } finally {
      await release(open);
    }
  });

  // Issue 57: many addresses (20,000 of 127.0.0.0/8) filled the total with idle connections, and a fresh client was hung up.
  it(`closes the longest-idle of ${TOTAL} connections for a fresh client: the client is served, the total kept`, async () => {
    const first = await idle('127.0.11.1', PER_ADDRESS, 0);
    const open = [...first, ...(await idle('127.0.12.1', PER_ADDRESS, 0)), ...(await idle('127.0.13.1', PER_ADDRESS))];
    try {
      expect(open).toHaveLength(TOTAL);
      expect(await signedRead('127.0.14.1')).toBe(200);
      await new Promise((resolve) => setTimeout(resolve, 100)); // the close reaches the client
      const closed = open.filter((entry) => entry.closed);
      expect(closed).toHaveLength(1); // one made way, no more
      expect(first).toContain(closed[0]); // one of the longest idle
      const metrics = (await get('127.0.14.2', '/metrics')).body;
      expect(metrics).toMatch(/partner_http_connections_refused_total\{limit="idle_closed"\} 1$/m); // the read's: it had closed when this one came
    } finally {
      await release(open);
    }
  });

  it(`closes a new connection at the total when every one of the ${TOTAL} has a request in progress, and serves again once one ends`, async () => {
    // A POST whose headers arrived and whose body has not: in progress until it arrives (or the request timeout).
    const busy = async (from: string, count: number) => {
      const entries = await idle(from, count, 0);
      for (const entry of entries) entry.socket.write(`POST /partner/v1/platforms/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{`);
      return entries;
    };
    const open = [...(await busy('127.0.21.1', PER_ADDRESS)), ...(await busy('127.0.22.1', PER_ADDRESS)), ...(await busy('127.0.23.1', PER_ADDRESS))];
    await new Promise((resolve) => setTimeout(resolve, 300)); // every request's headers read
    try {
      expect(open.filter((entry) => !entry.closed)).toHaveLength(TOTAL);
      expect(await signedRead('127.0.24.1')).toBe('socket hang up');
      expect(open.filter((entry) => entry.closed)).toHaveLength(0); // none with a request in progress was closed
      await release(open.slice(0, 1));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await signedRead('127.0.24.1')).toBe(200);
    } finally {
      await release(open);
    }
  });

  /** Sends `head`, then an endless chunked body for `ms`: the answer's status line, whether the server closed the connection, and the bytes it took. */
  function endlessBody(head: string, ms = 2000): Promise<{ status: string; closed: boolean; sent: number }> {
    return new Promise((resolve) => {
      const socket = connect({ port, host: '127.0.0.1', localAddress: '127.0.0.21' });
      const chunk = Buffer.alloc(64 * 1024, 'a');
      const frame = Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')]);
      let [answer, closed, sent] = ['', false, 0];
      socket.on('data', (data) => (answer += data.toString('latin1')));
      socket.on('error', () => {});
      socket.on('close', () => (closed = true));
      const pump = () => {
        while (!closed && socket.writable && socket.write(frame)) sent += frame.length;
      };
      socket.on('drain', () => ((sent += frame.length), pump()));
      socket.write(head);
      pump();
      setTimeout(() => {
        resolve({ status: answer.split('\r\n')[0]!, closed, sent });
        socket.destroy();
      }, ms);
    });
  }

  it('answers a GET with an endless body, then closes its connection instead of reading on (27 GiB were read)', async () => {
    const path = '/partner/v1/platforms/orders?limit=1';
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = await signRequest({ secret: t.merchant.apiSecret, timestamp, method: 'GET', target: path, body: '' });
    const signed = `GET ${path} HTTP/1.1\r\nHost: x\r\nX-Api-Key: ${t.merchant.apiKey}\r\nX-Timestamp: ${timestamp}\r\nX-Signature: ${signature}\r\nTransfer-Encoding: chunked\r\n\r\n`;
    for (const head of [
      'GET /healthz HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n',
      'GET /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 100000000000\r\n\r\n',
      signed,
      'GET /no/such/path HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n',
    ]) {
      const outcome = await endlessBody(head);
      expect(outcome.status, head.split('\r\n')[0]).toMatch(/^HTTP\/1\.1 (200|404) /);
      expect(outcome.closed, head.split('\r\n')[0]).toBe(true);
      // What the sockets' buffers take before the server closes (a few MiB on loopback), not what 2 s of writing would.
      expect(outcome.sent, head.split('\r\n')[0]).toBeLessThan(32 * 1024 * 1024);
    }
  });

  it('answers a POST body over the limit with 413 and closes its connection too', async () => {
    const outcome = await endlessBody('POST /partner/v1/platforms/orders HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n');
    expect(outcome.status).toMatch(/^HTTP\/1\.1 413 /);
    expect(outcome.closed).toBe(true);
  });
});

describe('the connection limits themselves', () => {
  it('count an IPv4-mapped address as its IPv4 one and an IPv6 address by its /64', () => {
    expect(addressOf('::ffff:203.0.113.9')).toBe('203.0.113.9');
    expect(addressOf('203.0.113.9')).toBe('203.0.113.9');
    expect(addressOf('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(addressOf('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(addressOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(addressOf('::1')).toBe('0:0:0:0::/64');
  });

  it('count a network as an IPv4 address\'s /24 and an IPv6 address\'s /48', () => {
    expect(networkOf('::ffff:203.0.113.9')).toBe('203.0.113.0/24');
    expect(networkOf('203.0.113.250')).toBe('203.0.113.0/24');
    expect(networkOf('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1::/48');
    expect(networkOf('2001:db8:1:ffff::9')).toBe('2001:db8:1::/48');
    expect(networkOf('2001:db8::1')).toBe('2001:db8:0::/48');
  });

  it('lower MAX_CONNECTIONS to what the open-file limit leaves beside the platform\'s own files', () => {
    expect(effectiveTotal(4096, 1024)).toBe(512);
    expect(effectiveTotal(4096, 1_048_576)).toBe(4096);
    expect(effectiveTotal(4096, undefined)).toBe(4096);
  });
});
