// A minimal Ethereum JSON-RPC client: the three calls the scanner needs. Tron's full nodes answer the
// same protocol at /jsonrpc, with addresses as 20-byte hex without Tron's 41 prefix.

export class RpcError extends Error {
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

export interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  transactionHash: string;
  logIndex: string;
  removed?: boolean;
}

export interface LogFilter {
  fromBlock: bigint;
  toBlock: bigint;
  address: string;
  topics: (string | string[] | null)[];
}

const hex = (n: bigint) => `0x${n.toString(16)}`;

export class JsonRpcClient {
  private id = 0;
  private readonly url: string;
  private readonly headers: Record<string, string> = { 'Content-Type': 'application/json' };

  /** User and password in the URL become a Basic Authorization header: fetch refuses them in URLs. */
  constructor(
    url: string,
    private readonly timeoutMs = 30_000,
  ) {
    const parsed = new URL(url);
    if (parsed.username || parsed.password) {
      const user = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
      this.headers.Authorization = `Basic ${Buffer.from(user).toString('base64')}`;
      parsed.username = '';
      parsed.password = '';
    }
    this.url = parsed.toString();
  }

  async call<T>(method: string, params: unknown[]): Promise<T> {
    const response = await fetch(this.url, {
      method: 'POST',
      headers: this.headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params }),
      signal: AbortSignal.timeout(this.timeoutMs),
    });
    if (!response.ok) throw new RpcError(`${method}: HTTP ${response.status}`);
    const reply = (await response.json()) as { result?: T; error?: { code: number; message: string } };
    if (reply.error) throw new RpcError(`${method}: ${reply.error.message}`, reply.error.code);
    if (reply.result === undefined) throw new RpcError(`${method}: no result`);
    return reply.result;
  }

  async blockNumber(): Promise<bigint> {
    return BigInt(await this.call<string>('eth_blockNumber', []));
  }

  /** The node's finalized block, or undefined when it does not know the tag. */
  async finalizedBlock(): Promise<bigint | undefined> {
    try {
      const block = await this.call<{ number: string } | null>('eth_getBlockByNumber', ['finalized', false]);
      return block ? BigInt(block.number) : undefined;
    } catch (error) {
      if (error instanceof RpcError) return undefined;
      throw error;
    }
  }

  /** A block's timestamp (UNIX seconds). */
  async blockTimestamp(block: bigint): Promise<number> {
    const found = await this.call<{ timestamp: string } | null>('eth_getBlockByNumber', [hex(block), false]);
    if (!found) throw new RpcError(`eth_getBlockByNumber: no block ${block}`);
    return Number(BigInt(found.timestamp));
  }

  getLogs(filter: LogFilter): Promise<RpcLog[]> {
    return this.call<RpcLog[]>('eth_getLogs', [
      { fromBlock: hex(filter.fromBlock), toBlock: hex(filter.toBlock), address: filter.address, topics: filter.topics },
    ]);
  }
}
