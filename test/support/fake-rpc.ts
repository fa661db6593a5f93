// A JSON-RPC node on loopback that serves an in-memory chain of ERC-20 logs, filtering eth_getLogs as
// a node does and recording every call: for scanner tests that need exact control of the chain.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RpcLog } from '../../src/server/chain/rpc.js';

export interface FakeChain {
  url: string;
  head: bigint;
  finalized: bigint | undefined;
  logs: RpcLog[];
  /** A block's timestamp in UNIX seconds (now, unless a test says otherwise). */
  blockTime: (block: bigint) => number;
  calls: { method: string; params: unknown[] }[];
  close(): Promise<void>;
}

interface Filter {
  fromBlock?: string;
  toBlock?: string;
  /** Instead of the range: one block by its hash (blockHash below); an unknown hash is an error, as geth answers it. */
  blockHash?: string;
  address: string;
  topics: (string | string[] | null)[];
}

const matches = (wanted: string | string[] | null | undefined, actual: string | undefined) =>
  wanted === null || wanted === undefined || (Array.isArray(wanted) ? wanted.includes(actual ?? '') : wanted === actual);

/** The fake chain's block hashes: one fixed chain, derived from the number. */
export const blockHash = (number: bigint) => `0x${'b'.repeat(48)}${number.toString(16).padStart(16, '0')}`;

export async function startFakeChain(): Promise<FakeChain> {
  const chain = {
    head: 0n,
    finalized: undefined as bigint | undefined,
    logs: [] as RpcLog[],
    calls: [] as FakeChain['calls'],
    blockTime: (_block: bigint) => Math.floor(Date.now() / 1000),
  };
  const answer = (method: string, params: unknown[]): unknown => {
    if (method === 'eth_blockNumber') return `0x${chain.head.toString(16)}`;
    if (method === 'eth_getBlockByNumber' && params[0] === 'finalized') {
      if (chain.finalized === undefined) throw Object.assign(new Error('unknown block tag'), { code: -32602 });
      return { number: `0x${chain.finalized.toString(16)}` };
    }
    if (method === 'eth_getBlockByNumber') {
      const number = BigInt(params[0] as string);
      return number > chain.head ? null : { number: params[0], hash: blockHash(number), parentHash: blockHash(number - 1n), timestamp: `0x${chain.blockTime(number).toString(16)}` };
    }
    if (method === 'eth_getLogs') {
      const filter = params[0] as Filter;
      let [from, to] = [BigInt(filter.fromBlock ?? 0), BigInt(filter.toBlock ?? 0)];
      if (filter.blockHash !== undefined) {
        const number = BigInt('0x' + filter.blockHash.slice(-16));
        if (filter.blockHash !== blockHash(number) || number > chain.head) throw Object.assign(new Error('unknown block'), { code: -32000 });
        [from, to] = [number, number];
      }
      return chain.logs.filter(
        (log) =>
          BigInt(log.blockNumber) >= from && BigInt(log.blockNumber) <= to &&
          log.address.toLowerCase() === filter.address.toLowerCase() &&
          filter.topics.every((wanted, i) => matches(wanted, log.topics[i])),
      );
    }
    throw Object.assign(new Error(`method ${method} not found`), { code: -32601 });
  };
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk));
    request.on('end', () => {
      const { id, method, params } = JSON.parse(body) as { id: number; method: string; params: unknown[] };
      chain.calls.push({ method, params });
      let reply: object;
      try {
        reply = { jsonrpc: '2.0', id, result: answer(method, params) };
      } catch (error) {
        reply = { jsonrpc: '2.0', id, error: { code: (error as { code?: number }).code ?? -32000, message: (error as Error).message } };
      }
      response.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify(reply));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return Object.assign(chain, {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  });
}
