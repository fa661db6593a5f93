// What one client may hold of the server (issue 50, items 1 and 7): connections per address and in
// total (MAX_CONNECTIONS_PER_ADDRESS, MAX_CONNECTIONS), the ones past them closed as soon as accepted,
// and no body read on past what the platform uses. Every address here is loopback (127.0.0.0/8).
import { request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addressOf, effectiveTotal } from '../../../src/server/http/connection-limits.js';
import { signRequest } from '../../../src/signing/index.js';
import { startTestPlatform, type TestPlatform } from '../../support/platform.js';

const PER_ADDRESS = 20;
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
    t = await startTestPlatform('pglite', { env: { MAX_CONNECTIONS_PER_ADDRESS: String(PER_ADDRESS), MAX_CONNECTIONS: String(TOTAL) } });
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

  it(`holds all clients together to ${TOTAL} connections, and serves again once some close`, async () => {
    const open = [...(await idle('127.0.0.11', PER_ADDRESS, 0)), ...(await idle('127.0.0.12', PER_ADDRESS, 0)), ...(await idle('127.0.0.13', PER_ADDRESS))];
    try {
      expect(open).toHaveLength(TOTAL);
      expect(await signedRead('127.0.0.14')).toBe('socket hang up');
      await release(open.slice(0, 5));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(await signedRead('127.0.0.14')).toBe(200);
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

  it('lower MAX_CONNECTIONS to what the open-file limit leaves beside the platform\'s own files', () => {
    expect(effectiveTotal(4096, 1024)).toBe(512);
    expect(effectiveTotal(4096, 1_048_576)).toBe(4096);
    expect(effectiveTotal(4096, undefined)).toBe(4096);
  });
});
