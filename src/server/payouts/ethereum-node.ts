// What the Ethereum payout job asks the node (JSON-RPC, the scanner's client): the hot wallet's nonce and
// balances, the fees of the moment, a gas estimate, a broadcast, and a transaction's receipt.
import { JsonRpcClient, RpcError } from '../chain/rpc.js';
import type { ChainLog } from './transfer-proof.js';
import { erc20TransferData } from './ethereum.js';

const quantity = (value: bigint) => `0x${value.toString(16)}`;
/** keccak256("balanceOf(address)")[0..4] */
const BALANCE_OF = '0x70a08231';
/** A tip to fall back to where the node has no eth_maxPriorityFeePerGas: 1 gwei. */
const DEFAULT_TIP = 1_000_000_000n;

export interface Receipt {
  /** true: executed; false: reverted. */
  succeeded: boolean;
  blockNumber: bigint;
  blockHash: string;
  logs: ChainLog[];
}

/** What a broadcast came to: taken now, or known already (the same bytes sent before); else it throws. */
export type BroadcastResult = 'sent' | 'known';

export class EthereumNode {
  constructor(readonly rpc: JsonRpcClient) {}

  async chainId(): Promise<bigint> {
    return BigInt(await this.rpc.call<string>('eth_chainId', []));
  }

  /** The newest block a payout counts as final at (the scanner's rule, JsonRpcClient.heads) and the latest. */
  heads(finality: 'confirmations' | 'finalized', confirmations: number): Promise<{ confirmed: bigint; latest: bigint }> {
    return this.rpc.heads(finality, confirmations);
  }

  /** The block in which the account's nonce passed `nonce` (a binary search up to `spentBy`, where it is known spent). */
  async blockSpendingNonce(address: string, nonce: bigint, spentBy: bigint): Promise<bigint> {
    let low = 0n;
    let high = spentBy;
    while (low < high) {
      const middle = (low + high) / 2n;
      if ((await this.nonce(address, middle)) > nonce) high = middle;
      else low = middle + 1n;
    }
    return high;
  }

  /**
   * The transaction of `address` holding `nonce` in `block`: its hash, or undefined when the node does not
   * show it (a block, or its transactions, it does not serve). The proof that a nonce was taken by another
   * transaction is this, and that transaction's receipt: never the absence of ours.
   */
  async transactionAtNonce(address: string, nonce: bigint, block: bigint): Promise<string | undefined> {
    const found = await this.rpc.call<{ transactions: { hash: string; from: string; nonce: string }[] } | null>('eth_getBlockByNumber', [quantity(block), true]);
    return found?.transactions?.find((t) => t.from.toLowerCase() === address.toLowerCase() && BigInt(t.nonce) === nonce)?.hash.toLowerCase();
  }

  /** The account's nonce: with its pending transactions, at the latest block, or as of a block. */
  async nonce(address: string, at: 'pending' | 'latest' | bigint): Promise<bigint> {
    return BigInt(await this.rpc.call<string>('eth_getTransactionCount', [address, typeof at === 'bigint' ? quantity(at) : at]));
  }

  async balance(address: string): Promise<bigint> {
    return BigInt(await this.rpc.call<string>('eth_getBalance', [address, 'latest']));
  }

  async tokenBalance(token: string, address: string): Promise<bigint> {
    const result = await this.rpc.call<string>('eth_call', [{ to: token, data: `${BALANCE_OF}${address.slice(2).toLowerCase().padStart(64, '0')}` }, 'latest']);
    return result === '0x' ? 0n : BigInt(result);
  }

  /** The latest block's base fee and the node's suggested tip. */
  async fees(): Promise<{ baseFee: bigint; tip: bigint }> {
    const block = await this.rpc.call<{ baseFeePerGas?: string }>('eth_getBlockByNumber', ['latest', false]);
    const tip = await this.rpc.call<string>('eth_maxPriorityFeePerGas', []).then(BigInt, () => DEFAULT_TIP);
    return { baseFee: BigInt(block.baseFeePerGas ?? '0x0'), tip };
  }

  /** The gas of the token transfer from `from`; RpcError with the node's word when it would revert. */
  async estimateTransfer(from: string, token: string, to: string, amount: bigint): Promise<bigint> {
    return BigInt(await this.rpc.call<string>('eth_estimateGas', [{ from, to: token, data: erc20TransferData(to, amount) }]));
  }

  /**
   * Sends signed bytes. The same bytes sent again are no second payment: "already known" (or imported) is
   * an answer of success; "nonce too low" means the nonce is spent (this transaction mined, or another),
   * which the receipts then tell apart; any other refusal throws.
   */
  async broadcast(raw: string): Promise<BroadcastResult | 'nonce spent'> {
    try {
      await this.rpc.call<string>('eth_sendRawTransaction', [raw]);
      return 'sent';
    } catch (error) {
      if (error instanceof RpcError && /already (known|imported)|known transaction/i.test(error.message)) return 'known';
      if (error instanceof RpcError && /nonce too low|nonce has already been used/i.test(error.message)) return 'nonce spent';
      throw error;
    }
  }

  /** The transaction's receipt, or undefined while it is not in a block (of the node's chain). */
  async receipt(hash: string): Promise<Receipt | undefined> {
    const found = await this.rpc.call<{ status: string; blockNumber: string; blockHash: string; logs: ChainLog[] } | null>('eth_getTransactionReceipt', [hash]);
    if (!found || !found.blockNumber) return undefined;
    return { succeeded: BigInt(found.status) === 1n, blockNumber: BigInt(found.blockNumber), blockHash: found.blockHash.toLowerCase(), logs: found.logs };
  }
}

/** A node's refusal that says the transfer would revert (eth_estimateGas): the token refuses it. */
export function isExecutionReverted(error: unknown): boolean {
  return error instanceof RpcError && (error.code === 3 || /execution reverted|revert/i.test(error.message));
}
