// A JSON-RPC proxy on 127.0.0.1 in front of a node (anvil) that a chaos test controls (issue 53): a node
// blind to receipts, transactions or logs for a while (it answers null / [] for them, as a load-balanced
// provider whose backend has not seen the block does), receipts shown only some blocks late, and the node
// down (every connection reset). Everything else reaches the node unchanged; batch requests too, each call
// answered as a single one would be. It counts the methods it saw.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Blindness {
  /** eth_getTransactionReceipt answers null. */
  receipts?: boolean;
  /** eth_getTransactionByHash answers null. */
  transactions?: boolean;
  /** eth_getLogs answers []. */
  logs?: boolean;
}

export interface RpcProxy {
  url: string;
  /** Blind to what is true from now on (the rest seen again); `blind({})` sees everything. */
  blind(what: Blindness): void;
  /** A receipt is shown only once its block is `blocks` blocks below the head (0: at once). */
  lateReceipts(blocks: number): void;
  /** true: every connection is reset before an answer; false: the node is back. */
  down(on: boolean): void;
  /** How many calls of each method the proxy saw (batched ones one by one), and how many it hid. */
  counts: Map<string, number>;
  hidden: Map<string, number>;
  close(): Promise<void>;
}

interface Call {
  jsonrpc?: string;
  id?: unknown;
  method: string;
  params?: unknown[];
}

export async function startRpcProxy(upstreamUrl: string): Promise<RpcProxy> {
  let blindness: Blindness = {};
  let late = 0;
  let isDown = false;
  const counts = new Map<string, number>();
  const hidden = new Map<string, number>();
  const bump = (map: Map<string, number>, method: string) => map.set(method, (map.get(method) ?? 0) + 1);

  const upstream = async (body: unknown): Promise<unknown> => {
    const response = await fetch(upstreamUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return response.json();
  };
  const head = async () => BigInt(((await upstream({ jsonrpc: '2.0', id: 0, method: 'eth_blockNumber', params: [] })) as { result: string }).result);

  /** One call's answer: the node's, or what a blind node says. */
  const answer = async (call: Call): Promise<unknown> => {
    bump(counts, call.method);
    const hide = () => (bump(hidden, call.method), { jsonrpc: '2.0', id: call.id, result: call.method === 'eth_getLogs' ? [] : null });
    if (call.method === 'eth_getTransactionReceipt' && blindness.receipts) return hide();
    if (call.method === 'eth_getTransactionByHash' && blindness.transactions) return hide();
    if (call.method === 'eth_getLogs' && blindness.logs) return hide();
    const reply = (await upstream(call)) as { result?: { blockNumber?: string } | null };
    if (call.method === 'eth_getTransactionReceipt' && late > 0 && reply.result?.blockNumber) {
      if (BigInt(reply.result.blockNumber) > (await head()) - BigInt(late)) return hide();
    }
    return reply;
  };

  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (isDown) return void request.socket.destroy();
      void (async () => {
        try {
          const body = JSON.parse(Buffer.concat(chunks).toString()) as Call | Call[];
          const reply = Array.isArray(body) ? await Promise.all(body.map(answer)) : await answer(body);
          if (isDown) return void request.socket.destroy();
          response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
        } catch (error) {
          response.writeHead(502, { 'content-type': 'text/plain' }).end((error as Error).message);
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    blind: (what) => void (blindness = { ...what }),
    lateReceipts: (blocks) => void (late = blocks),
    down: (on) => void (isDown = on),
    counts,
    hidden,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
