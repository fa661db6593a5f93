// Pages are sent as bytes written into buffers that are used again (json-text.ts): many pages in flight
// at once, of every size, their items strings or bytes, each arrives whole and as its own, over real
// connections.
import { connect } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JSON_TEXT_ITEMS, sendItem, sendPage } from '../../../src/server/http/json-text.js';

/** Page `n`: n items of n × 97 characters each, some outside ASCII (bytes ≠ characters): up to 2.4 MB. */
function itemsOf(n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${String(n).padStart(3, '0')}-${i}-é€😀-`.padEnd(n * 97, String.fromCharCode(97 + (i % 26))));
}

describe('a page sent as bytes', () => {
  let app: FastifyInstance;
  let base: string;
  /** Pages whose rows sendPage released. */
  let released = 0;
  beforeAll(async () => {
    app = Fastify();
    app.get<{ Params: { n: string } }>('/page/:n', async (request, reply) => {
      const n = Number(request.params.n);
      // The reply waits a little, as a database would, so that pages overlap.
      await new Promise((resolve) => setTimeout(resolve, n % 7));
      // Half the items as strings, half as their bytes: both are what a driver gives (Utf8Text).
      const items = itemsOf(n).map((item, i) => (i % 2 === 0 ? JSON.stringify(item) : Buffer.from(JSON.stringify(item))));
      return sendPage(reply, { items, hasMore: n % 2 === 0, nextCursor: n % 2 === 0 ? `cursor-${n}` : undefined, release: () => {} }, JSON_TEXT_ITEMS);
    });
    app.get<{ Params: { n: string } }>('/item/:n', async (request, reply) => sendItem(reply, Buffer.from(JSON.stringify(itemsOf(Number(request.params.n)))), JSON_TEXT_ITEMS));
    // A writer that counts one byte more than it writes.
    const miscounted = { bytes: (item: string) => JSON_TEXT_ITEMS.bytes(item) + 1, write: JSON_TEXT_ITEMS.write };
    app.get('/miscounted/page', async (_request, reply) => sendPage(reply, { items: ['"a"', '"b"'], hasMore: false, nextCursor: undefined, release: () => void released++ }, miscounted));
    app.get('/miscounted/item', async (_request, reply) => sendItem(reply, '"a"', miscounted));
    base = await app.listen({ host: '127.0.0.1', port: 0 });
  });
  afterAll(() => app?.close());

  // First: while few buffers are kept, a buffer given back too early would be the next page's.
  it("keeps a page's buffer while its reader is slow: pages sent meanwhile never write over it", async () => {
    // 10 MB, more than the connection's socket buffers take: the server still holds the rest to write.
    const n = 330;
    const { port } = new URL(base);
    const slow = connect({ host: '127.0.0.1', port: Number(port) });
    const chunks: Buffer[] = [];
    const ended = new Promise<void>((resolve) => slow.on('end', resolve));
    slow.on('data', (chunk) => chunks.push(chunk));
    slow.pause();
    slow.write(`GET /page/${n} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n`);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const other of [n, n, n - 1]) expect((await (await fetch(`${base}/page/${other}`)).json()).data).toEqual(itemsOf(other));
    slow.resume();
    await ended;
    const response = Buffer.concat(chunks).toString('utf8');
    const body = response.slice(response.indexOf('\r\n\r\n') + 4);
    expect(body.length).toBeGreaterThan(10_000_000);
    expect(JSON.parse(body).data).toEqual(itemsOf(n));
  });

  it('arrives whole and as its own, 300 pages of 1 to 160 items, 40 at a time', async () => {
    const sizes = Array.from({ length: 300 }, (_, i) => 1 + ((i * 37) % 160));
    for (let at = 0; at < sizes.length; at += 40) {
      await Promise.all(
        sizes.slice(at, at + 40).map(async (n) => {
          const response = await fetch(`${base}/page/${n}`);
          expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
          const text = await response.text();
          expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
          expect(JSON.parse(text)).toEqual({ data: itemsOf(n), hasMore: n % 2 === 0, ...(n % 2 === 0 ? { nextCursor: `cursor-${n}` } : {}) });
        }),
      );
    }
    expect(Math.max(...sizes) * Math.max(...sizes) * 97).toBeGreaterThan(128 * 1024); // pages larger than a kept buffer's least size
  });

  it('sends nothing of a response whose size was counted wrong: the end of an earlier page would follow it', async () => {
    for (const path of ['/miscounted/page', '/miscounted/item']) {
      const response = await fetch(`${base}${path}`);
      expect(response.status).toBe(500);
      expect(await response.text()).not.toContain('"a"');
    }
    // The page's rows were released all the same: no route holds them.
    expect(released).toBe(1);
    // The page buffer went back: pages after it arrive whole.
    expect((await (await fetch(`${base}/page/3`)).json()).data).toEqual(itemsOf(3));
  });

  it('sends one item as the whole response, of any size', async () => {
    for (const n of [0, 1, 40, 160]) {
      const response = await fetch(`${base}/item/${n}`);
      const text = await response.text();
      expect(Number(response.headers.get('content-length'))).toBe(Buffer.byteLength(text));
      expect(JSON.parse(text)).toEqual(itemsOf(n));
    }
  });
});
