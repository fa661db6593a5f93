// A minimal Ethereum JSON-RPC client: the three calls the scanner needs. Tron's full nodes answer the
// same protocol at /jsonrpc, with addresses as 20-byte hex without Tron's 41 prefix.

export class RpcError extends Error {
  constructor(
    message: string,
    readonly code?: number,
    /** The HTTP status when the node (or its gateway) answered with an HTTP error, e.g. 429 or 503. */
    readonly status?: number,
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/**
 * A node that does not know the `finalized` tag (a chain without it): method not found, or an answer
 * that the request itself was not understood (an invalid, unknown or unsupported block tag; a block
 * parameter it cannot parse, as clients before the tag answer it). Judged by what the answer means,
 * not by one client's wording: an answer that says the block is missing ("not found", "not
 * available", "unknown block", "no finalized block", …) never counts as unsupported, nor does
 * anything else (429, 5xx, a timeout): those end the round, never a reason to count confirmations.
 */
export function isUnsupportedTag(error: unknown): boolean {
  if (!(error instanceof RpcError) || error.code === undefined) return false;
  if (error.code === -32601) return true; // method not found, whatever its message says
  if (isFinalizedBlockMissing(error)) return false;
  return (error.code === -32602 || error.code === -32600 || error.code === -32000) && TAG_NOT_UNDERSTOOD.test(error.message);
}

/** The request was not understood: the tag (or the block parameter) is unknown to the node. */
const TAG_NOT_UNDERSTOOD =
  /\b(invalid|unknown|unsupported|unrecognized|unexpected)\s+(block\s+)?tag\b|\btag\b[^.;]*\b(not supported|unsupported|not recognized|invalid)\b|\bnot supported\b|hex string|cannot unmarshal|invalid block number|invalid argument/i;

/** The block is missing, in the words clients use for it: the node knows what was asked, it has no such block (yet). */
const BLOCK_MISSING =
  /\bnot\s+(been\s+)?(found|available|ready|known|finali[sz]ed|yet)\b|\bunavailable\b|\bunknown\s+(finali[sz]ed\s+)?block\b(?!\s*tag)|\bno\s+(such\s+)?(finali[sz]ed\s+)?block\b|\bdoes\s*n[o']t\s+exist\b|\bmissing\b|\bnot\s+synced\b|\bsyncing\b/i;

/**
 * The node knows the tag but has no finalized block (yet): geth's -32000 "finalized block not found"
 * until its consensus client reports finality (e.g. after a restart), "unknown block", "finalized
 * block is not available" and other clients' wordings of the same. Any JSON-RPC error answer but
 * "method not found" that says the block is missing counts, whatever its code. Counting confirmations
 * instead would credit what finality has not covered, so the scan waits.
 */
export function isFinalizedBlockMissing(error: unknown): boolean {
  return isBlockMissing(error);
}

/** A JSON-RPC answer (not "method not found") saying the block asked for is missing: e.g. geth's "unknown block" for a block hash it does not have. */
export function isBlockMissing(error: unknown): boolean {
  return error instanceof RpcError && error.code !== undefined && error.code !== -32601 && BLOCK_MISSING.test(error.message);
}

/** The node has no finalized block (yet): a round without progress, retried at the next poll. */
export class FinalityUnavailableError extends RpcError {}

/**
 * An eth_getLogs refused for its size, as providers write it: geth/Infura/Erigon and java-tron
 * (-32005 "query returned more than 10000 results", Infura adding "Try with this block range
 * [0x…, 0x…]"), Alchemy ("Log response size exceeded … this block range should work: [0x…, 0x…]"),
 * QuickNode and others ("eth_getLogs is limited to a 10,000 range", "block range is too wide",
 * "exceed maximum block range"), java-tron/TronGrid ("exceed max block range: 5000", and its topic
 * and address limits), Besu/Nethermind/llamarpc ("query exceeds max results", "too many logs").
 * Such a query is split, never retried as it was.
 */
export function isLogLimitError(error: unknown): boolean {
  // Not every -32005 is one: Infura also uses it for rate limits, which splitting would only worsen.
  if (!(error instanceof RpcError)) return false;
  return LOG_LIMIT_PATTERNS.some((pattern) => pattern.test(error.message));
}

const LOG_LIMIT_PATTERNS = [
  /query returned more than \d+ results/i,
  /log response size exceeded/i,
  /response size (exceeded|should not)/i,
  /block range (is )?too (wide|large)/i,
  /block range limit exceeded/i,
  /exceeds? (the )?max(imum)? block range/i,
  /exceed max block range/i,
  /limited to (a )?[\d,.]+ (block )?range/i,
  /query exceeds max results/i,
  /logs matched by query exceeds limit/i,
  /too many (logs|results|blocks)/i,
  /exceed max (topics|addresses|sub ?topics)/i,
  /range (is )?too large/i,
];

/** The block range a provider's error suggests ("this block range should work: [0x1, 0x2]"), if any. */
export function suggestedRange(error: unknown): { from: bigint; to: bigint } | undefined {
  const match = /\[\s*(0x[0-9a-f]+)\s*,\s*(0x[0-9a-f]+)\s*\]/i.exec(error instanceof Error ? error.message : '');
  return match ? { from: BigInt(match[1]!), to: BigInt(match[2]!) } : undefined;
}

export interface RpcBlock {
  number: bigint;
  hash: string;
  parentHash: string;
  /** UNIX seconds. */
  timestamp: number;
}

export interface RpcLog {
  address: string;
  topics: string[];
  data: string;
  blockNumber: string;
  blockHash?: string;
  transactionHash: string;
  logIndex: string;
  removed?: boolean;
}

/** A block range, or one block by its hash (a node that does not have that block answers an error). */
export type LogFilter = ({ fromBlock: bigint; toBlock: bigint } | { blockHash: string }) & {
  address: string;
  topics: (string | string[] | null)[];
};

const hex = (n: bigint) => `0x${n.toString(16)}`;

/**
 * A node's URL without its user and password, and those as a Basic Authorization header: fetch refuses
 * credentials in URLs (the Ethereum RPC's and the Tron API's URLs may carry a provider's).
 */
export function withoutCredentials(url: string): { url: URL; authorization?: string } {
  const parsed = new URL(url);
  if (!parsed.username && !parsed.password) return { url: parsed };
  const user = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { url: parsed, authorization: `Basic ${Buffer.from(user).toString('base64')}` };
}

export class JsonRpcClient {
  private id = 0;
  private readonly url: string;
  private readonly headers: Record<string, string> = { 'Content-Type': 'application/json' };

  constructor(
    url: string,
    private readonly timeoutMs = 30_000,
  ) {
    const { url: bare, authorization } = withoutCredentials(url);
    if (authorization) this.headers.Authorization = authorization;
    this.url = bare.toString();
  }

  async call<T>(method: string, params: unknown[]): Promise<T> {
    const response = await this.post(method, JSON.stringify({ jsonrpc: '2.0', id: ++this.id, method, params }));
    if (!response.ok) throw new RpcError(`${method}: HTTP ${response.status}`, undefined, response.status);
    const reply = (await response.json()) as { result?: T; error?: { code: number; message: string } };
    if (reply.error) throw new RpcError(`${method}: ${reply.error.message}`, reply.error.code);
    if (reply.result === undefined) throw new RpcError(`${method}: no result`);
    return reply.result;
  }

  /**
   * One POST, tried a second time when no answer came at all: fetch's TypeError ("fetch failed": refused,
   * reset, or a kept-alive socket the node closed just as it was reused, which a loaded machine meets;
   * issue 57). Every call may be sent twice: a read is a read, and the same signed bytes sent again are
   * "already known". A second failure is an RpcError naming the cause, never the URL (it may hold a key).
   */
  private async post(method: string, body: string): Promise<Response> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await fetch(this.url, { method: 'POST', headers: this.headers, body, signal: AbortSignal.timeout(this.timeoutMs) });
      } catch (error) {
        if (!(error instanceof TypeError)) throw error; // a timeout, as it came
        if (attempt < 2) continue;
        const cause = (error.cause as { code?: unknown } | undefined)?.code;
        throw new RpcError(`${method}: no answer from the node (${typeof cause === 'string' ? cause : error.message})`);
      }
    }
  }

  async blockNumber(): Promise<bigint> {
    return BigInt(await this.call<string>('eth_blockNumber', []));
  }

  /**
   * The node's finalized block, or undefined when it does not know the tag; FinalityUnavailableError
   * when it knows the tag but has no finalized block; any other failure throws as it came.
   */
  async finalizedBlock(): Promise<bigint | undefined> {
    try {
      const block = await this.call<{ number: string } | null>('eth_getBlockByNumber', ['finalized', false]);
      if (!block) throw new FinalityUnavailableError('eth_getBlockByNumber: the node has no finalized block yet', -32000);
      return BigInt(block.number);
    } catch (error) {
      if (isUnsupportedTag(error)) return undefined;
      if (isFinalizedBlockMissing(error)) throw new FinalityUnavailableError(`${(error as Error).message}: the node has no finalized block yet; waiting`, -32000);
      throw error;
    }
  }

  /**
   * The newest block whose transactions count (`confirmed`: the node's finalized block, or `confirmations`
   * below the latest, the latest counting as one) and the latest block. The one rule of finality for
   * what comes in (a deposit credited) and what goes out (a payout DONE). Only a node that does not know
   * the `finalized` tag falls back to confirmations; any other failure throws, so a rate limit never moves
   * the rule past finality, and a node without a finalized block yet (FinalityUnavailableError) waits.
   */
  async heads(finality: 'confirmations' | 'finalized', confirmations: number): Promise<{ confirmed: bigint; latest: bigint }> {
    if (finality === 'finalized') {
      const finalized = await this.finalizedBlock();
      if (finalized !== undefined) {
        const latest = await this.blockNumber();
        return { confirmed: finalized, latest: latest > finalized ? latest : finalized };
      }
    }
    const latest = await this.blockNumber();
    return { confirmed: latest - BigInt(confirmations) + 1n, latest };
  }

  /** A block by number, or undefined when the node does not have it (yet). */
  async block(number: bigint): Promise<RpcBlock | undefined> {
    const found = await this.call<{ number: string; hash: string; parentHash: string; timestamp: string } | null>('eth_getBlockByNumber', [hex(number), false]);
    if (!found) return undefined;
    return { number: BigInt(found.number), hash: found.hash.toLowerCase(), parentHash: found.parentHash.toLowerCase(), timestamp: Number(BigInt(found.timestamp)) };
  }

  /** A block's timestamp (UNIX seconds). */
  async blockTimestamp(number: bigint): Promise<number> {
    const found = await this.block(number);
    if (!found) throw new RpcError(`eth_getBlockByNumber: no block ${number}`);
    return found.timestamp;
  }

  getLogs(filter: LogFilter): Promise<RpcLog[]> {
    const where = 'blockHash' in filter ? { blockHash: filter.blockHash } : { fromBlock: hex(filter.fromBlock), toBlock: hex(filter.toBlock) };
    return this.call<RpcLog[]>('eth_getLogs', [{ ...where, address: filter.address, topics: filter.topics }]);
  }
}
