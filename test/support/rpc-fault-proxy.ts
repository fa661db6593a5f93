// A JSON-RPC proxy in front of a real node (anvil) that misbehaves the way providers do (issue 9):
// eth_getLogs refused with each provider's real result- and range-limit errors, a backend lagging
// behind the head, the `finalized` tag unsupported or failing with 429/503, and an `address` filter
// ignored. Every request reaches the real node; only the answer is changed.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** Providers whose eth_getLogs limit errors the proxy reproduces (messages as they send them). */
export type LimitProvider = 'infura' | 'alchemy' | 'quicknode' | 'ankr' | 'publicnode' | 'tron';

export interface Faults {
  /** Refuse eth_getLogs whose result has more than `maxLogs` logs, or whose range has more than `maxBlocks` blocks. */
  logLimit?: { provider: LimitProvider; maxLogs?: number; maxBlocks?: number };
  /**
   * A backend `blocks` behind the node: for the methods listed, it reports a lower head, answers
   * `null` for blocks it does not have, and leaves their logs out of eth_getLogs.
   */
  lag?: {
    blocks: number;
    methods: ('eth_blockNumber' | 'eth_getBlockByNumber' | 'eth_getLogs')[];
    /** eth_getLogs of one block by its hash from a backend that does not lag (a load balancer that spreads calls). */
    hashQueriesHealthy?: boolean;
  };
  /** `unsupported`: the node does not know the tag; a number: the HTTP status of a failing gateway. */
  finalized?: 'unsupported' | 429 | 503;
  /** Forward eth_getLogs without its address and recipient filters (a provider that ignores them). */
  ignoreAddressFilter?: boolean;
}

export interface FaultProxy {
  url: string;
  faults: Faults;
  /** Every request, and whether the proxy refused it. */
  calls: { method: string; params: unknown[]; refused?: string }[];
  close(): Promise<void>;
}

interface LogFilter {
  fromBlock?: string;
  toBlock?: string;
  blockHash?: string;
  address?: string;
  topics?: (string | string[] | null)[];
}

type Reply = { result: unknown } | { error: { code: number; message: string; data?: unknown } } | { status: number; body: string };

const hex = (n: bigint) => `0x${n.toString(16)}`;

/** The error a provider sends for a query over its limit, with the range it suggests (half the query). */
function limitError(provider: LimitProvider, kind: 'logs' | 'blocks', from: bigint, to: bigint, limit: number): { code: number; message: string; data?: unknown } {
  const half = from + (to - from) / 2n;
  switch (provider) {
    case 'infura':
      return { code: -32005, message: `query returned more than 10000 results. Try with this block range [${hex(from)}, ${hex(half)}].`, data: { from: hex(from), to: hex(half), limit: 10000 } };
    case 'alchemy':
      return {
        code: -32602,
        message:
          'Log response size exceeded. You can make eth_getLogs requests with up to a 2K block range and no limit on the response size, or you can request any block range with a cap of 10K logs in the response. ' +
          `Based on your parameters, this block range should work: [${hex(from)}, ${hex(half)}]`,
      };
    case 'quicknode': // a block-range limit only
      return { code: -32602, message: `eth_getLogs is limited to a ${limit.toLocaleString('en-US')} range` };
    case 'publicnode':
      return { code: -32000, message: `exceed maximum block range: ${limit}` };
    case 'ankr':
      return { code: -32600, message: kind === 'blocks' ? 'block range is too wide' : 'query exceeds max results' };
    case 'tron':
      return kind === 'blocks' ? { code: -32602, message: `exceed max block range: ${limit}` } : { code: -32005, message: 'query returned more than 10000 results' };
  }
}

export async function startFaultProxy(upstreamUrl: string): Promise<FaultProxy> {
  const proxy: Omit<FaultProxy, 'url' | 'close'> = { faults: {}, calls: [] };
  let nextId = 1;
  const upstream = async (method: string, params: unknown[]): Promise<{ result?: unknown; error?: { code: number; message: string } }> => {
    const response = await fetch(upstreamUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }) });
    return (await response.json()) as { result?: unknown; error?: { code: number; message: string } };
  };
  const forward = async (method: string, params: unknown[]): Promise<Reply> => {
    const answer = await upstream(method, params);
    return answer.error ? { error: answer.error } : { result: answer.result };
  };
  const realHead = async () => BigInt((await upstream('eth_blockNumber', [])).result as string);
  const lagging = (method: string) => proxy.faults.lag && proxy.faults.lag.methods.includes(method as never);

  const answer = async (method: string, params: unknown[], refuse: (why: string) => void): Promise<Reply> => {
    const { faults } = proxy;
    if (method === 'eth_blockNumber' && lagging(method)) return { result: hex((await realHead()) - BigInt(faults.lag!.blocks)) };
    if (method === 'eth_getBlockByNumber' && params[0] === 'finalized' && faults.finalized) {
      refuse(`finalized ${faults.finalized}`);
      if (faults.finalized === 'unsupported') return { error: { code: -32602, message: 'invalid block tag finalized' } };
      return { status: faults.finalized, body: faults.finalized === 429 ? '{"jsonrpc":"2.0","id":1,"error":{"code":-32005,"message":"rate limit exceeded"}}' : 'service unavailable' };
    }
    if (method === 'eth_getBlockByNumber' && lagging(method) && typeof params[0] === 'string' && params[0].startsWith('0x')) {
      if (BigInt(params[0]) > (await realHead()) - BigInt(faults.lag!.blocks)) {
        refuse('block beyond the lagging head');
        return { result: null };
      }
    }
    if (method !== 'eth_getLogs') return forward(method, params);

    const filter = { ...(params[0] as LogFilter) };
    let from: bigint, to: bigint;
    if (filter.blockHash !== undefined) {
      // One block by its hash: a backend that does not have it answers geth's "unknown block".
      const block = (await upstream('eth_getBlockByHash', [filter.blockHash, false])).result as { number: string } | null;
      if (!block || (lagging(method) && !faults.lag!.hashQueriesHealthy && BigInt(block.number) > (await realHead()) - BigInt(faults.lag!.blocks))) {
        refuse('block hash beyond the lagging head');
        return { error: { code: -32000, message: 'unknown block' } };
      }
      from = to = BigInt(block.number);
    } else [from, to] = [BigInt(filter.fromBlock!), BigInt(filter.toBlock!)];
    const limit = faults.logLimit;
    if (limit?.maxBlocks !== undefined && to - from + 1n > BigInt(limit.maxBlocks)) {
      refuse(`${limit.provider} block range`);
      return { error: limitError(limit.provider, 'blocks', from, to, limit.maxBlocks) };
    }
    if (faults.ignoreAddressFilter) {
      delete filter.address;
      filter.topics = filter.topics?.slice(0, 1);
    }
    const reply = await forward(method, [filter]);
    if (!('result' in reply)) return reply;
    let logs = reply.result as { blockNumber: string }[];
    if (lagging(method) && !(filter.blockHash !== undefined && faults.lag!.hashQueriesHealthy)) {
      const lagHead = (await realHead()) - BigInt(faults.lag!.blocks);
      logs = logs.filter((log) => BigInt(log.blockNumber) <= lagHead);
    }
    if (limit?.maxLogs !== undefined && logs.length > limit.maxLogs) {
      refuse(`${limit.provider} result limit`);
      return { error: limitError(limit.provider, 'logs', from, to, limit.maxLogs) };
    }
    return { result: logs };
  };

  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk));
    request.on('end', () => {
      void (async () => {
        const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: unknown[] };
        const call: FaultProxy['calls'][number] = { method, params };
        proxy.calls.push(call);
        const reply = await answer(method, params, (why) => (call.refused = why)).catch((error: Error) => ({ status: 502, body: error.message }));
        if ('status' in reply) response.writeHead(reply.status, { 'content-type': 'application/json' }).end(reply.body);
        else response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ jsonrpc: '2.0', id, ...reply }));
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(proxy, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
