// A merchant's callback receiver on loopback: records every delivery (raw body, headers, time) and
// answers as a path says: /ok → 200, /status/500 → 500, /status/410 → 410, /slow → after `slowMs`,
// /redirect → 302 to /ok, /fail-first → 500 to the path's first delivery and 200 after, /held-first →
// the path's first delivery held until release() and then 500, 200 at once after.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Delivery {
  path: string;
  headers: IncomingMessage['headers'];
  body: string;
  at: number;
}

export interface Receiver {
  url: string;
  deliveries: Delivery[];
  /** The most requests that were open at once. */
  maxOpen(): number;
  /** Answers the held /held-first deliveries (500). */
  release(): void;
  /** Resolves once `count` deliveries matching `filter` have arrived. */
  waitFor(count: number, filter?: (d: Delivery) => boolean, timeoutMs?: number): Promise<Delivery[]>;
  close(): Promise<void>;
}

export async function startReceiver(options: { slowMs?: number } = {}): Promise<Receiver> {
  const deliveries: Delivery[] = [];
  let open = 0;
  let maxOpen = 0;
  const seen = new Map<string, number>();
  const held: Array<() => void> = [];
  const server = createServer((request, response) => {
    maxOpen = Math.max(maxOpen, ++open);
    response.on('close', () => open--);
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = request.url ?? '/';
      deliveries.push({ path, headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() });
      const status = /^\/status\/(\d{3})/.exec(path);
      if (status) return void response.writeHead(Number(status[1])).end();
      const nth = (seen.get(path) ?? 0) + 1;
      seen.set(path, nth);
      if (path.startsWith('/fail-first')) return void response.writeHead(nth === 1 ? 500 : 200).end();
      if (path.startsWith('/held-first')) {
        if (nth === 1) return void held.push(() => response.writeHead(500).end());
        return void response.writeHead(200).end();
      }
      if (path.startsWith('/redirect')) return void response.writeHead(302, { Location: '/ok' }).end();
      if (path.startsWith('/slow')) return void setTimeout(() => response.writeHead(200).end(), options.slowMs ?? 5000).unref();
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    maxOpen: () => maxOpen,
    release: () => held.splice(0).forEach((answer) => answer()),
    async waitFor(count, filter = () => true, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      while (Date.now() < end) {
        const matching = deliveries.filter(filter);
        if (matching.length >= count) return matching;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error(`expected ${count} deliveries, got ${deliveries.filter(filter).length}: ${JSON.stringify(deliveries.map((d) => d.path))}`);
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
