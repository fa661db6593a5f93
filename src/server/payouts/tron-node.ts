// What the Tron payout job asks a java-tron node's HTTP API (TRON_API_URL): the head block and the
// solidified one, a broadcast, which of its reads knows a transaction, a solidified transaction's info, and
// the hot wallet's token and TRX balances. The answers' shapes are java-tron's (FullNode HTTP API,
// https://developers.tron.network/reference/full-node-api-overview, and the /walletsolidity servlets of
// https://developers.tron.network/reference/solidity-node-http-api-overview), with visible=false:
// addresses as 41-hex, messages as hex of their text. A user and password in the URL become a Basic
// Authorization header, and an API key (TRON_API_KEY) TronGrid's TRON-PRO-API-KEY header on every request;
// an error names the API's path, never the URL or the headers (they may carry a key).
import { tronAddressToId } from '../addresses/derivation.js';
import { withoutCredentials } from '../chain/rpc.js';
import { referenceBlockOf, type SignedTronTransaction, type TronReferenceBlock } from './tron.js';
import type { ChainLog } from './transfer-proof.js';

/** keccak256("balanceOf(address)")[0..4] */
const BALANCE_OF = '70a08231';

export class TronNodeError extends Error {
  constructor(
    message: string,
    /** The node's refusal code (api.Return.response_code), when it answered one. */
    readonly code?: string,
  ) {
    super(message);
    this.name = 'TronNodeError';
  }
}

/** What a broadcast came to: taken now, or known already (the same bytes sent before); else it throws. */
export type TronBroadcastResult = 'sent' | 'known';

/** A solidified transaction's outcome, from /walletsolidity/gettransactioninfobyid. */
export interface TronTransactionInfo {
  blockNumber: number;
  /** receipt.result: SUCCESS, REVERT, OUT_OF_ENERGY, …; DEFAULT when the node wrote none (not a contract call). */
  result: string;
  /** The top-level result: FAILED for a failed contract call (the node leaves SUCESS out). */
  failed: boolean;
  /** resMessage, decoded from hex: why it failed. */
  message: string | undefined;
  logs: ChainLog[];
}

type Json = Record<string, unknown>;

/** The reads that know a transaction once a block holds it (a txID, or an info's id). */
const TRANSACTION_READS = ['/wallet/gettransactionbyid', '/walletsolidity/gettransactionbyid', '/wallet/gettransactioninfobyid', '/walletsolidity/gettransactioninfobyid'];

export class TronNode {
  private readonly base: string;
  private readonly headers: Record<string, string> = { 'Content-Type': 'application/json' };

  private readonly timeoutMs: number;

  constructor(url: string, { apiKey, timeoutMs = 30_000 }: { apiKey?: string | undefined; timeoutMs?: number } = {}) {
    this.timeoutMs = timeoutMs;
    const { url: bare, authorization } = withoutCredentials(url);
    if (authorization) this.headers.Authorization = authorization;
    if (apiKey) this.headers['TRON-PRO-API-KEY'] = apiKey;
    // The API's paths go after the URL's own (a provider's key may be a path segment).
    this.base = bare.toString().replace(/\/+$/, '');
  }

  /** The head block: what a new transaction refers to (TaPoS) and counts its expiration from. */
  async headBlock(): Promise<TronReferenceBlock> {
    return referenceBlockOf(await this.post('/wallet/getnowblock', {}));
  }

  /** The latest solidified block: what can no longer be reverted, and the time a payout's expiration is judged by. */
  async solidBlock(): Promise<TronReferenceBlock> {
    return referenceBlockOf(await this.post('/walletsolidity/getnowblock', {}));
  }

  /**
   * Sends a signed transaction. The same bytes sent again are no second payment: DUP_TRANSACTION_ERROR
   * (java-tron's cache of the ids it took, or the transaction already in a block) is an answer of
   * success; any other refusal throws with the node's code and message.
   */
  async broadcast(transaction: SignedTronTransaction | string): Promise<TronBroadcastResult> {
    const answer = await this.post('/wallet/broadcasttransaction', typeof transaction === 'string' ? JSON.parse(transaction) : transaction);
    if (answer.result === true) return 'sent';
    if (answer.code === 'DUP_TRANSACTION_ERROR') return 'known';
    const code = typeof answer.code === 'string' ? answer.code : undefined;
    const message = typeof answer.message === 'string' ? hexText(answer.message) : 'no message';
    throw new TronNodeError(`broadcasttransaction refused: ${code ?? 'error'}: ${message}`, code);
  }

  /**
   * Which of the API's transaction reads has the transaction in a block, asked one after the other: the full
   * node's and the solidity node's gettransactionbyid and gettransactioninfobyid (java-tron's know no pending
   * one). Behind a load balancer each may come from another backend, one of them behind the others: a
   * single `{}` proves little, four of them a little more. Undefined when none has it.
   */
  async whereKnown(txId: string): Promise<string | undefined> {
    for (const path of TRANSACTION_READS) {
      const answer = await this.post(path, { value: txId });
      if (typeof answer.txID === 'string' || typeof answer.id === 'string') return path;
    }
    return undefined;
  }

  /** The transaction's info once its block is solidified; undefined before (or when no block holds it). */
  async solidifiedInfo(txId: string): Promise<TronTransactionInfo | undefined> {
    const answer = await this.post('/walletsolidity/gettransactioninfobyid', { value: txId });
    if (typeof answer.id !== 'string' || typeof answer.blockNumber !== 'number') return undefined;
    const receipt = (answer.receipt ?? {}) as Json;
    return {
      blockNumber: answer.blockNumber,
      result: typeof receipt.result === 'string' ? receipt.result : 'DEFAULT',
      failed: answer.result === 'FAILED',
      message: typeof answer.resMessage === 'string' ? hexText(answer.resMessage) : undefined,
      logs: Array.isArray(answer.log) ? (answer.log as ChainLog[]) : [],
    };
  }

  /**
   * The TRC-20 balance of `owner` (base58check) at the solidified block: the token's balanceOf, called
   * without a transaction. No transfer that is not solidified yet has moved it.
   */
  async tokenBalance(token: string, owner: string): Promise<bigint> {
    const answer = await this.post('/walletsolidity/triggerconstantcontract', {
      owner_address: hexAddress(owner),
      contract_address: hexAddress(token),
      function_selector: 'balanceOf(address)',
      parameter: hexAddress(owner).slice(2).padStart(64, '0'),
      visible: false,
    });
    const result = (answer.result ?? {}) as Json;
    // A refusal (no such contract) or a call that reverted: result false, or a message (hex) beside result true.
    if (result.result !== true || typeof result.message === 'string') {
      const why = typeof result.message === 'string' ? hexText(result.message) : 'no result';
      throw new TronNodeError(`triggerconstantcontract ${BALANCE_OF}: ${typeof result.code === 'string' ? `${result.code}: ` : ''}${why}`);
    }
    const value = Array.isArray(answer.constant_result) ? answer.constant_result[0] : undefined;
    if (typeof value !== 'string' || !/^[0-9a-fA-F]{64}$/.test(value)) throw new TronNodeError('triggerconstantcontract: balanceOf answered no 32-byte word');
    return BigInt(`0x${value}`);
  }

  /** The TRX balance of `address` (base58check) in sun: 0 for an account the chain does not have (never activated). */
  async trxBalance(address: string): Promise<bigint> {
    const answer = await this.post('/wallet/getaccount', { address: hexAddress(address), visible: false });
    // An empty answer: no such account. proto3 leaves a zero balance out.
    const balance = answer.balance ?? 0;
    if (typeof balance !== 'number' || !Number.isSafeInteger(balance) || balance < 0) throw new TronNodeError('getaccount: balance is not a number of sun');
    return BigInt(balance);
  }

  private async post(path: string, body: unknown): Promise<Json> {
    let response: Response;
    try {
      response = await fetch(this.base + path, { method: 'POST', headers: this.headers, body: JSON.stringify(body), signal: AbortSignal.timeout(this.timeoutMs) });
    } catch (error) {
      throw new TronNodeError(`${path}: ${failure(error, this.timeoutMs)}`);
    }
    if (!response.ok) {
      await response.body?.cancel();
      throw new TronNodeError(`${path}: HTTP ${response.status}`);
    }
    let answer: unknown;
    try {
      answer = await response.json();
    } catch {
      throw new TronNodeError(`${path}: the answer is not JSON`);
    }
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) throw new TronNodeError(`${path}: the answer is not a JSON object`);
    const json = answer as Json;
    // A servlet's own failure (Util.processError): { "Error": "class … : message" }.
    if (typeof json.Error === 'string') throw new TronNodeError(`${path}: ${json.Error}`);
    return json;
  }
}

/** Why a request failed, without the URL: a timeout, or the connection's error code. */
function failure(error: unknown, timeoutMs: number): string {
  const name = (error as Error | undefined)?.name;
  if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' ? `connection failed (${cause.code})` : 'connection failed';
}

/** A base58check address as the 41-hex the node takes with visible=false. */
function hexAddress(address: string): string {
  return `41${Buffer.from(tronAddressToId(address)).toString('hex')}`;
}

/** A message java-tron writes as hex of its text (visible=false); anything else as it is. */
function hexText(value: string): string {
  return /^([0-9a-fA-F]{2})+$/.test(value) ? Buffer.from(value, 'hex').toString('utf8') : value;
}
