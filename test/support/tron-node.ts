// A stand-in of a Tron full node's HTTP API (java-tron's /wallet and /walletsolidity servlets) on loopback,
// for the payout tests: no Tron node runs here (java-tron needs a JDK and a network). It holds a chain of
// 3-second blocks, one TRC-20 token's balances, a pool of pending transactions, and verifies a broadcast
// as java-tron does (TaPoS, expiration, duplicates, the owner's signature over sha256(raw_data)), with
// tronweb's own protobuf and recovery, not the platform's. The answers have java-tron's shapes:
//   /wallet/broadcasttransaction:  https://tronprotocol.github.io/documentation-en/api/http/tx-build-and-broadcast/broadcasttransaction/
//                                  (java-tron Wallet.broadcastTransaction's codes and messages; errors' `message` hex unless visible)
//   /wallet/getnowblock:           https://tronprotocol.github.io/documentation-en/api/http/block-and-tx-query/getnowblock/
//   /wallet/gettransactionbyid:    https://tronprotocol.github.io/documentation-en/api/http/block-and-tx-query/gettransactionbyid/
//   /wallet/gettransactioninfobyid: https://tronprotocol.github.io/documentation-en/api/http/block-and-tx-query/gettransactioninfobyid/
//   (also https://developers.tron.network/reference-link/gettransactioninfobyid and
//   https://developers.tron.network/docs/broadcast-and-rpc-errors)
//   /wallet/getaccount:            https://developers.tron.network/reference/getaccount (java-tron GetAccountServlet: `{}`
//                                  for an account the chain does not have; proto3 leaves a zero balance out)
//   /wallet/triggerconstantcontract: https://developers.tron.network/reference/triggerconstantcontract (java-tron
//                                  TriggerConstantContractServlet and Wallet.triggerConstantContract: api.TransactionExtention)
// TRX balances are modelled only for the accounts given one (setTrxBalance): getaccount shows them, and a
// transfer they sign burns its energy fee from them, its energy limited by min(balance, fee_limit) as java-tron's
// VMActuator limits it; an account without one answers `{}` and pays nothing (the broadcast tests need no TRX).
// Bandwidth is modelled only for the accounts given some (setBandwidth): a transfer uses NET_USAGE bytes of it, or
// burns 1,000 sun a byte of TRX when it has too little, and a broadcast neither covers is refused as java-tron's
// BandwidthProcessor refuses it (BANDWITH_ERROR, "AccountResourceInsufficient error"); an account without any
// pays nothing for bandwidth. A transfer whose energy the owner's TRX cannot buy is not refused (java-tron limits
// its energy, VMActuator.getAccountEnergyLimitWithFixRatio): it runs out of energy in its block (OUT_OF_ENERGY).
// As a load-balanced provider may, it can answer from backends not in step: the transaction reads of /wallet and of
// /walletsolidity each from a backend that lags by its own number of blocks (lagWalletReads, lagSolidityReads);
// every second request from a whole backend behind (lagAlternateRequests); and one request may hang until the
// test releases it (holdNext). With an API key it answers only requests that carry it (TronGrid's TRON-PRO-API-KEY).
// What it does not model: account creation, contracts other than the token's transfer(address,uint256)
// and balanceOf(address), reorganisations, other witnesses.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { TronWeb, utils as tronUtils } from 'tronweb';

const BLOCK_INTERVAL_MS = 3_000;
/** java-tron's MAXIMUM_TIME_UNTIL_EXPIRATION. */
const MAX_EXPIRATION_MS = 24 * 60 * 60 * 1000;
/** TaPoS: a transaction refers to one of the last 65,536 blocks by the low 16 bits of its number. */
const TAPOS_WINDOW = 65_536;
/** keccak256("Transfer(address,address,uint256)") */
const TRANSFER_TOPIC = 'ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef';
const TRANSFER_SELECTOR = 'a9059cbb';
/** keccak256("balanceOf(address)")[0..4] */
const BALANCE_OF_SELECTOR = '70a08231';
/** What a USDT transfer costs in energy to a holder and to an address that holds none yet. */
export const TRANSFER_ENERGY = { toHolder: 64_285, toNewHolder: 130_285 };
const NET_USAGE = 345;
/** Sun burnt a byte of bandwidth the account does not have (the chain parameter getTransactionFee). */
const BANDWIDTH_PRICE_SUN = 1_000;

export type BroadcastLoss =
  /** the request never reaches the node: the connection is closed unanswered, the node knows nothing. */
  | 'request'
  /** the node takes the transaction (it will be mined) but the answer is lost: the connection is closed. */
  | 'answer'
  /** the node answers success and then drops it: never mined, though its txID stays in the node's cache
   * (java-tron's transactionIdCache, an hour), so a re-broadcast answers DUP_TRANSACTION_ERROR. */
  | 'dropped';

export interface TronNodeOptions {
  /** The TRC-20 contract the node executes transfers of (base58check). */
  token: string;
  /** The first block's number (default 70,000,000, about mainnet's height in 2025). */
  startBlock?: number;
  /** The first block's time in ms (default now, rounded down to a 3-second slot). */
  startTime?: number;
  /** How many blocks the solidified block lags the head (default 19: 2/3 of 27 witnesses, plus one). */
  solidLag?: number;
  /** Sun per unit of energy, burnt from the fee_limit (default 210). */
  energyPriceSun?: number;
  /** TronGrid's API key: set, a request without it in TRON-PRO-API-KEY is answered 401 {"Error":"ApiKey not exists"}. */
  apiKey?: string;
}

export interface TronBlockView {
  number: number;
  blockID: string;
  timestamp: number;
  transactions: string[];
}

export interface BroadcastRecord {
  txID: string | undefined;
  /** The JSON answered, or 'lost' when the connection was closed unanswered. */
  answer: Record<string, unknown> | 'lost';
}

export interface TronNode {
  url: string;
  readonly head: TronBlockView;
  readonly solid: TronBlockView;
  /** Produces blocks of 3 seconds; the first packs the pending transactions that have not expired (unless include is false). */
  produceBlocks(count?: number, options?: { include?: boolean }): void;
  /** Lets `ms` of chain time pass: as many empty-or-packing blocks as fit (at least one). */
  advanceTime(ms: number, options?: { include?: boolean }): void;
  /** Sets the balance at the head; the solidity API sees it once the next block is solidified. */
  setTokenBalance(address: string, amount: bigint): void;
  /** The balance at the head. */
  tokenBalance(address: string): bigint;
  /** Gives the account a TRX balance (sun): from then on getaccount shows it and its transfers burn their energy fee from it. */
  setTrxBalance(address: string, sun: bigint): void;
  /** The account's TRX balance in sun; undefined for an account without one. */
  trxBalance(address: string): bigint | undefined;
  /** Gives the account `bytes` of bandwidth (free and staked together): from then on its transfers use it, or burn TRX for it. */
  setBandwidth(address: string, bytes: number): void;
  /** The account's bandwidth left in bytes; undefined for an account without any modelled. */
  bandwidth(address: string): number | undefined;
  /** The next broadcast that would be accepted is lost, as `how` says. */
  loseNextBroadcast(how: BroadcastLoss): void;
  /** The transaction reverts when it is executed (whether already pending or broadcast later). */
  revertTransaction(txID: string): void;
  /** The next transaction the node accepts reverts when it is executed. */
  revertNextBroadcast(): void;
  /** While down, every connection is closed at once (a node that went away). */
  setDown(down: boolean): void;
  /**
   * The solidity API's transaction reads (gettransactionbyid, gettransactioninfobyid) come from a backend
   * `blocks` behind the one that answers its getnowblock: a load balancer over nodes not in step.
   */
  lagSolidityReads(blocks: number): void;
  /**
   * The full node API's transaction reads (/wallet/gettransactionbyid, /wallet/gettransactioninfobyid) come
   * from a backend `blocks` behind the head: a load-balanced node that has not imported the latest blocks yet.
   */
  lagWalletReads(blocks: number): void;
  /**
   * From the next request on, every second one (the second first) is answered by a backend `blocks` behind the
   * others: its head, its solidified block, its transaction reads and its token balances (0: all in step again).
   * A broadcast is taken as the others take it (the network passes it on).
   */
  lagAlternateRequests(blocks: number): void;
  /**
   * The next request to `path` hangs, unread and unanswered, until `release()` (a node call that waits, as
   * one may for its 30 s): `reached` resolves once it has arrived. It is answered as the node stands at the release.
   */
  holdNext(path: string): { reached: Promise<void>; release(): void };
  /** txIDs waiting for a block. */
  pending(): string[];
  broadcasts: BroadcastRecord[];
  /** Every request: its path, JSON body, and its Authorization and TRON-PRO-API-KEY headers. */
  calls: { path: string; body: unknown; authorization: string | undefined; apiKey: string | undefined }[];
  close(): Promise<void>;
}

interface Block {
  number: number;
  blockID: string;
  parentHash: string;
  timestamp: number;
  transactions: string[];
}

interface StoredTransaction {
  txID: string;
  json: Record<string, unknown>;
  rawDataHex: string;
  owner: string; // 41-hex
  to: string; // 41-hex
  amount: bigint;
  expiration: number;
  feeLimit: number;
  revert: boolean;
  block?: number;
  info?: Record<string, unknown>;
  contractRet?: string;
}

class BroadcastRefusal extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startTronNode(options: TronNodeOptions): Promise<TronNode> {
  const tokenHex = TronWeb.address.toHex(options.token).toLowerCase();
  const solidLag = options.solidLag ?? 19;
  const energyPrice = options.energyPriceSun ?? 210;
  const blocks = new Map<number, Block>();
  const balances = new Map<string, bigint>();
  /** TRX in sun, of the accounts given a balance. */
  const trxBalances = new Map<string, bigint>();
  /** Bandwidth in bytes, of the accounts given some. */
  const bandwidths = new Map<string, number>();
  const transactions = new Map<string, StoredTransaction>();
  /** java-tron's transactionIdCache: txIDs the node took, mined or not. */
  const seen = new Set<string>();
  let pendingIds: string[] = [];
  const revertIds = new Set<string>();
  let revertNext = false;
  let loseNext: BroadcastLoss | undefined;
  let down = false;
  let solidityReadLag = 0;
  let walletReadLag = 0;
  let alternateLag = 0;
  let alternated = 0;
  /** The requests to hold (holdNext), by path: each taken by the next request to its path. */
  const holds = new Map<string, { arrived: () => void; released: Promise<void> }>();
  const broadcasts: BroadcastRecord[] = [];
  const calls: TronNode['calls'] = [];

  const makeBlock = (number: number, parentHash: string, timestamp: number): Block => {
    const digest = createHash('sha256').update(`${number}/${parentHash}/${timestamp}`).digest('hex');
    // A Tron blockID is the block's number in 8 bytes, then 24 bytes of the header's hash.
    return { number, blockID: number.toString(16).padStart(16, '0') + digest.slice(16), parentHash, timestamp, transactions: [] };
  };
  const startTime = options.startTime ?? Math.floor(Date.now() / BLOCK_INTERVAL_MS) * BLOCK_INTERVAL_MS;
  let head = makeBlock(options.startBlock ?? 70_000_000, '0'.repeat(64), startTime);
  blocks.set(head.number, head);
  /** The token's balances after each block: what the solidity API reads (a balance set counts from the next block). */
  const balancesAfter = new Map<number, Map<string, bigint>>([[head.number, new Map()]]);
  const solidNumber = () => Math.max(head.number - solidLag, options.startBlock ?? 70_000_000);

  const execute = (tx: StoredTransaction, block: Block) => {
    const fromBalance = balances.get(tx.owner) ?? 0n;
    const newHolder = (balances.get(tx.to) ?? 0n) === 0n;
    const energy = newHolder ? TRANSFER_ENERGY.toNewHolder : TRANSFER_ENERGY.toHolder;
    const energyFee = energy * energyPrice;
    const base = { id: tx.txID, blockNumber: block.number, blockTimeStamp: block.timestamp, contract_address: tokenHex };
    payBandwidth(tx.owner);
    // The energy the call may use: what the fee_limit buys, and no more than the owner's TRX buys.
    const trx = trxBalances.get(tx.owner);
    const energyLimit = Math.floor(Math.min(tx.feeLimit, trx === undefined ? Infinity : Number(trx)) / energyPrice);
    const burn = (sun: number) => {
      if (trx !== undefined) trxBalances.set(tx.owner, trx - BigInt(sun));
    };
    /** A call that failed after burning `used` energy, as the node reports it: no transfer, the energy paid for. */
    const fail = (result: 'OUT_OF_ENERGY' | 'REVERT', used: number, message: string) => {
      tx.contractRet = result;
      burn(used * energyPrice);
      tx.info = {
        ...base,
        fee: used * energyPrice,
        contractResult: [''],
        receipt: { energy_fee: used * energyPrice, energy_usage_total: used, net_usage: NET_USAGE, result },
        result: 'FAILED',
        resMessage: utf8Hex(message),
      };
    };
    if (energy > energyLimit) {
      fail('OUT_OF_ENERGY', energyLimit, "Not enough energy for 'SSTORE' operation executing: curInvokeEnergyLimit[" + energyLimit + ']');
    } else if (tx.revert || fromBalance < tx.amount) {
      fail('REVERT', Math.min(2_000, energyLimit), 'REVERT opcode executed');
    } else {
      tx.contractRet = 'SUCCESS';
      burn(energyFee);
      balances.set(tx.owner, fromBalance - tx.amount);
      balances.set(tx.to, (balances.get(tx.to) ?? 0n) + tx.amount);
      tx.info = {
        ...base,
        fee: energyFee,
        contractResult: ['0'.repeat(63) + '1'],
        receipt: { energy_fee: energyFee, energy_usage_total: energy, net_usage: NET_USAGE, result: 'SUCCESS' },
        log: [
          {
            address: tokenHex.slice(2),
            topics: [TRANSFER_TOPIC, tx.owner.slice(2).padStart(64, '0'), tx.to.slice(2).padStart(64, '0')],
            data: tx.amount.toString(16).padStart(64, '0'),
          },
        ],
      };
    }
    tx.block = block.number;
    block.transactions.push(tx.txID);
  };

  /** Whether the account can pay a transaction's bandwidth: its own, or TRX to burn for it. */
  const coversBandwidth = (owner: string) => {
    const bytes = bandwidths.get(owner);
    return bytes === undefined || bytes >= NET_USAGE || (trxBalances.get(owner) ?? 0n) >= BigInt(NET_USAGE * BANDWIDTH_PRICE_SUN);
  };
  /** BandwidthProcessor.consume: the account's bandwidth, else TRX burnt for it (an account without any modelled pays nothing). */
  const payBandwidth = (owner: string) => {
    const bytes = bandwidths.get(owner);
    if (bytes === undefined) return;
    if (bytes >= NET_USAGE) bandwidths.set(owner, bytes - NET_USAGE);
    else trxBalances.set(owner, (trxBalances.get(owner) ?? 0n) - BigInt(NET_USAGE * BANDWIDTH_PRICE_SUN));
  };

  const produceBlocks = (count = 1, { include = true } = {}) => {
    for (let i = 0; i < count; i++) {
      const block = makeBlock(head.number + 1, head.blockID, head.timestamp + BLOCK_INTERVAL_MS);
      blocks.set(block.number, block);
      head = block;
      // A pending transaction that expired before this block is dropped (its txID stays in the cache).
      pendingIds = pendingIds.filter((id) => transactions.get(id)!.expiration >= block.timestamp);
      if (include) {
        for (const id of pendingIds) execute(transactions.get(id)!, block);
        pendingIds = [];
      }
      balancesAfter.set(block.number, new Map(balances));
    }
  };

  const view = (block: Block): TronBlockView => ({ number: block.number, blockID: block.blockID, timestamp: block.timestamp, transactions: [...block.transactions] });

  const transactionJson = (tx: StoredTransaction) => ({ ret: [{ contractRet: tx.contractRet }], ...tx.json, txID: tx.txID, raw_data_hex: tx.rawDataHex });

  const blockJson = (block: Block) => ({
    blockID: block.blockID,
    block_header: {
      raw_data: {
        number: block.number,
        txTrieRoot: createHash('sha256').update(block.transactions.join()).digest('hex'),
        witness_address: '41' + createHash('sha256').update(`witness ${block.number % 27}`).digest('hex').slice(0, 40),
        parentHash: block.parentHash,
        version: 31,
        timestamp: block.timestamp,
      },
      witness_signature: createHash('sha512').update(block.blockID).digest('hex') + '00',
    },
    // java-tron leaves an empty repeated field out.
    ...(block.transactions.length > 0 ? { transactions: block.transactions.map((id) => transactionJson(transactions.get(id)!)) } : {}),
  });

  /** raw_data re-encoded as the node does (JsonFormat into protobuf; here tronweb's), and its txID. */
  const encode = (body: Record<string, unknown>): { rawDataHex: string; txID: string } => {
    let rawDataHex: string;
    let txID: string;
    try {
      const pb = tronUtils.transaction.txJsonToPb(body);
      rawDataHex = tronUtils.transaction.txPbToRawDataHex(pb).toLowerCase();
      txID = tronUtils.transaction.txPbToTxID(pb).replace(/^0x/, '').toLowerCase();
    } catch (error) {
      throw new ServletError(`class java.lang.NullPointerException : ${(error as Error).message}`);
    }
    // The node computes the txID from raw_data and ignores raw_data_hex and txID; the stand-in is stricter, so
    // that a client whose three disagree learns it here rather than from a txID the chain never knows.
    if (typeof body.raw_data_hex === 'string' && body.raw_data_hex.toLowerCase() !== rawDataHex) {
      throw new ServletError(`stand-in check: raw_data_hex is not the protobuf of raw_data (${rawDataHex})`);
    }
    if (typeof body.txID === 'string' && body.txID.toLowerCase() !== txID) throw new ServletError(`stand-in check: txID is not sha256(raw_data) (${txID})`);
    return { rawDataHex, txID };
  };

  /** java-tron Wallet.broadcastTransaction's checks, in its order (the cache's duplicate first, the signature last). */
  const validate = (body: Record<string, unknown>, { rawDataHex, txID }: { rawDataHex: string; txID: string }): StoredTransaction => {
    const signatures = Array.isArray(body.signature) ? (body.signature as unknown[]) : [];
    for (const signature of signatures) {
      const size = typeof signature === 'string' ? signature.replace(/^0x/, '').length / 2 : 0;
      if (size !== 65) throw new BroadcastRefusal('SIGERROR', `Validate signature error: Signature size is ${size}`);
    }
    if (seen.has(txID)) throw new BroadcastRefusal('DUP_TRANSACTION_ERROR', 'Transaction already exists.');

    const raw = (body.raw_data ?? {}) as Record<string, unknown>;
    const contracts = Array.isArray(raw.contract) ? (raw.contract as Record<string, unknown>[]) : [];
    if (contracts.length === 0) throw new BroadcastRefusal('CONTRACT_VALIDATE_ERROR', 'Contract validate error : No contract!');
    const value = ((contracts[0]!.parameter as Record<string, unknown> | undefined)?.value ?? {}) as Record<string, unknown>;
    const owner = hexAddress(value.owner_address);
    const data = String(value.data ?? '').toLowerCase();
    if (contracts.length !== 1 || contracts[0]!.type !== 'TriggerSmartContract' || hexAddress(value.contract_address) !== tokenHex || !data.startsWith(TRANSFER_SELECTOR) || data.length !== 8 + 128) {
      throw new BroadcastRefusal('CONTRACT_VALIDATE_ERROR', 'Contract validate error : the stand-in node executes transfer(address,uint256) of its token only');
    }

    // TaPoS: ref_block_bytes are the low 16 bits of a recent block's number, ref_block_hash bytes 8-16 of its blockID.
    const refBytes = parseInt(String(raw.ref_block_bytes ?? ''), 16);
    const refHash = String(raw.ref_block_hash ?? '').toLowerCase();
    const referenced = [...blocks.values()].some((b) => b.number > head.number - TAPOS_WINDOW && (b.number & 0xffff) === refBytes && b.blockID.slice(16, 32) === refHash);
    if (!referenced) throw new BroadcastRefusal('TAPOS_ERROR', 'Tapos check error.');

    const expiration = Number(raw.expiration);
    // validateCommon: after the head block and at most 24 h after it; checkExpiration: not before the next slot.
    if (!(expiration > head.timestamp && expiration <= head.timestamp + MAX_EXPIRATION_MS) || expiration < head.timestamp + BLOCK_INTERVAL_MS) {
      throw new BroadcastRefusal('TRANSACTION_EXPIRATION_ERROR', 'Transaction expired');
    }
    if (transactions.get(txID)?.block !== undefined) throw new BroadcastRefusal('DUP_TRANSACTION_ERROR', 'Dup transaction.');

    // The signature must recover the owner's address from the txID (tronweb's recovery: ethers').
    const recovered = signatures.length === 1 ? tronUtils.crypto.ecRecover(txID, String(signatures[0])).toLowerCase() : undefined;
    if (recovered !== owner) throw new BroadcastRefusal('SIGERROR', `Validate signature error: ${txID} transaction signature validate failed`);
    // Manager.processTransaction consumes the bandwidth after the signature: Wallet.broadcastTransaction's AccountResourceInsufficientException.
    if (!coversBandwidth(owner)) throw new BroadcastRefusal('BANDWITH_ERROR', 'AccountResourceInsufficient error');
    const tx: StoredTransaction = {
      txID,
      json: { raw_data: raw, signature: signatures },
      rawDataHex,
      owner,
      to: `41${data.slice(8 + 24, 8 + 64)}`,
      amount: BigInt(`0x${data.slice(8 + 64)}`),
      expiration,
      feeLimit: Number(raw.fee_limit ?? 0),
      revert: revertIds.has(txID) || revertNext,
    };
    revertNext = false;
    return tx;
  };

  const answerBroadcast = (body: Record<string, unknown>, visible: boolean, response: ServerResponse): void => {
    let encoded: { rawDataHex: string; txID: string };
    try {
      encoded = encode(body);
    } catch (error) {
      if (!(error instanceof ServletError)) throw error;
      const answer = { Error: error.message };
      broadcasts.push({ txID: undefined, answer });
      return sendJson(response, answer);
    }
    const { txID } = encoded;
    let tx: StoredTransaction;
    try {
      tx = validate(body, encoded);
    } catch (error) {
      if (!(error instanceof BroadcastRefusal)) throw error;
      // api.Return: `result` false is proto3's default and left out; `message` is hex unless visible.
      const answer = { code: error.code, txid: txID, message: visible ? error.message : utf8Hex(error.message) };
      broadcasts.push({ txID, answer });
      return sendJson(response, answer);
    }
    seen.add(txID);
    const loss = loseNext;
    loseNext = undefined;
    if (loss !== 'dropped') {
      transactions.set(txID, tx);
      pendingIds.push(txID);
    }
    if (loss === 'answer') {
      broadcasts.push({ txID, answer: 'lost' });
      response.socket?.destroy();
      return;
    }
    const answer = { result: true, txid: txID };
    broadcasts.push({ txID, answer });
    sendJson(response, answer);
  };

  const lookup = (body: Record<string, unknown>, solidOnly: boolean, behind: number): StoredTransaction | undefined => {
    const id = String(body.value ?? '').toLowerCase().replace(/^0x/, '');
    const tx = transactions.get(id);
    if (!tx || tx.block === undefined) return undefined;
    if (solidOnly && tx.block > solidNumber() - solidityReadLag - behind) return undefined;
    if (!solidOnly && tx.block > head.number - walletReadLag - behind) return undefined;
    return tx;
  };

  /** A block `behind` blocks before `number` (never before the first). */
  const before = (number: number, behind: number) => Math.max(number - behind, options.startBlock ?? 70_000_000);

  const handle = (path: string, body: Record<string, unknown>, response: ServerResponse) => {
    const visible = body.visible === true || body.visible === 'true';
    // The backend behind the others answers every second request (lagAlternateRequests).
    const behind = alternateLag > 0 && ++alternated % 2 === 0 ? alternateLag : 0;
    switch (path) {
      case '/wallet/getnowblock':
        return sendJson(response, blockJson(blocks.get(before(head.number, behind))!));
      case '/walletsolidity/getnowblock':
        return sendJson(response, blockJson(blocks.get(before(solidNumber(), behind))!));
      case '/wallet/getblock': {
        const wanted = body.id_or_num === undefined ? head : [...blocks.values()].find((b) => String(b.number) === String(body.id_or_num) || b.blockID === body.id_or_num);
        if (!wanted) return sendJson(response, {});
        const json = blockJson(wanted);
        if (body.detail !== true) delete (json as { transactions?: unknown }).transactions;
        return sendJson(response, json);
      }
      case '/wallet/broadcasttransaction':
        return answerBroadcast(body, visible, response);
      case '/wallet/gettransactionbyid':
      case '/walletsolidity/gettransactionbyid': {
        const tx = lookup(body, path.startsWith('/walletsolidity'), behind);
        return sendJson(response, tx ? transactionJson(tx) : {});
      }
      case '/wallet/gettransactioninfobyid':
      case '/walletsolidity/gettransactioninfobyid': {
        const tx = lookup(body, path.startsWith('/walletsolidity'), behind);
        return sendJson(response, tx?.info ?? {});
      }
      case '/wallet/getaccount': {
        const address = hexAddress(body.address);
        const trx = trxBalances.get(address);
        return sendJson(response, trx === undefined ? {} : accountJson(address, trx, visible));
      }
      case '/wallet/triggerconstantcontract':
        return sendJson(response, constantCall(body, visible, behind > 0 ? balancesAfter.get(before(head.number, behind))! : balances));
      case '/walletsolidity/triggerconstantcontract':
        return sendJson(response, constantCall(body, visible, balancesAfter.get(before(solidNumber(), behind))!));
      default:
        response.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    }
  };

  /** An account as GetAccountServlet prints it: a plain account of one key, its zero fields left out. */
  const accountJson = (address: string, trx: bigint, visible: boolean) => {
    const shown = visible ? TronWeb.address.fromHex(address) : address;
    const key = { address: shown, weight: 1 };
    return {
      address: shown,
      ...(trx > 0n ? { balance: Number(trx) } : {}),
      create_time: startTime,
      net_window_size: 28_800,
      net_window_optimized: true,
      account_resource: { energy_window_size: 28_800, energy_window_optimized: true },
      owner_permission: { permission_name: 'owner', threshold: 1, keys: [key] },
      active_permission: [{ type: 'Active', id: 2, permission_name: 'active', threshold: 1, operations: '7fff1fc0033ec30f000000000000000000000000000000000000000000000000', keys: [key] }],
      frozenV2: [{}, { type: 'ENERGY' }, { type: 'TRON_POWER' }],
    };
  };

  /**
   * A constant call as java-tron answers it (api.TransactionExtention): the token's balanceOf(address) in `state`
   * (the head's, or the solidified block's); another function of the token reverts (result true with its message, the transaction's ret FAILED);
   * another contract is refused (CONTRACT_VALIDATE_ERROR); missing fields are the servlet's OTHER_ERROR.
   */
  const constantCall = (body: Record<string, unknown>, visible: boolean, state: Map<string, bigint>): Record<string, unknown> => {
    const message = (text: string) => (visible ? text : utf8Hex(text));
    const owner = hexAddress(body.owner_address);
    const contract = hexAddress(body.contract_address);
    const selector = typeof body.function_selector === 'string' ? body.function_selector : undefined;
    for (const [name, given] of [['owner_address', owner], ['contract_address', contract]] as const) {
      if (!given) return { result: { code: 'OTHER_ERROR', message: message(`class java.security.InvalidParameterException : ${name} isn't set.`) } };
    }
    if (!selector && typeof body.data !== 'string') return { result: { code: 'OTHER_ERROR', message: message("class java.security.InvalidParameterException : function_selector isn't set.") } };
    if (contract !== tokenHex) return { result: { code: 'CONTRACT_VALIDATE_ERROR', message: message('No contract or not a smart contract') } };
    const data = (selector ? functionSelector(selector) + String(body.parameter ?? '') : String(body.data)).toLowerCase();
    const balanceOf = data.startsWith(BALANCE_OF_SELECTOR) && /^[0-9a-f]{64}$/.test(data.slice(8)) && /^0{24}/.test(data.slice(8));
    // java-tron builds the call as a transaction referring to the head, expiring 60 s after it.
    const raw = {
      contract: [{ parameter: { value: { data, owner_address: owner, contract_address: contract }, type_url: 'type.googleapis.com/protocol.TriggerSmartContract' }, type: 'TriggerSmartContract' }],
      ref_block_bytes: (head.number & 0xffff).toString(16).padStart(4, '0'),
      ref_block_hash: head.blockID.slice(16, 32),
      expiration: head.timestamp + 60_000,
      timestamp: head.timestamp,
    };
    const { rawDataHex, txID } = encode({ raw_data: raw });
    const transaction = { ret: [balanceOf ? {} : { ret: 'FAILED' }], visible, txID, raw_data: raw, raw_data_hex: rawDataHex };
    if (!balanceOf) return { result: { result: true, message: message('REVERT opcode executed') }, energy_used: 230, constant_result: [''], transaction };
    const holder = `41${data.slice(8 + 24)}`;
    return { result: { result: true }, energy_used: 935, constant_result: [(state.get(holder) ?? 0n).toString(16).padStart(64, '0')], transaction };
  };

  const sockets = new Set<Socket>();
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    if (request.method === 'POST' && url.pathname === '/wallet/broadcasttransaction' && loseNext === 'request') {
      loseNext = undefined;
      broadcasts.push({ txID: undefined, answer: 'lost' });
      request.socket.destroy();
      return;
    }
    const apiKey = request.headers['tron-pro-api-key'];
    const credentials = { authorization: request.headers.authorization, apiKey: typeof apiKey === 'string' ? apiKey : undefined };
    let text = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (text += chunk));
    request.on('end', () => {
      let body: Record<string, unknown>;
      try {
        body = request.method === 'GET' ? Object.fromEntries(url.searchParams) : text.trim() === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
      } catch (error) {
        calls.push({ path: url.pathname, body: text, ...credentials });
        return sendJson(response, { Error: `class com.alibaba.fastjson.JSONException : ${(error as Error).message}` });
      }
      calls.push({ path: url.pathname, body, ...credentials });
      // TronGrid's answer to a request without the key it asks for (or with another).
      if (options.apiKey !== undefined && credentials.apiKey !== options.apiKey) return sendJson(response, { Error: 'ApiKey not exists' }, 401);
      const hold = holds.get(url.pathname);
      if (!hold) return handle(url.pathname, body, response);
      holds.delete(url.pathname);
      hold.arrived();
      void hold.released.then(() => handle(url.pathname, body, response));
    });
  });
  server.on('connection', (socket: Socket) => {
    if (down) {
      socket.destroy();
      return;
    }
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    get head() {
      return view(head);
    },
    get solid() {
      return view(blocks.get(solidNumber())!);
    },
    produceBlocks,
    advanceTime: (ms, options) => produceBlocks(Math.max(1, Math.ceil(ms / BLOCK_INTERVAL_MS)), options),
    setTokenBalance: (address, amount) => balances.set(TronWeb.address.toHex(address).toLowerCase(), amount),
    tokenBalance: (address) => balances.get(TronWeb.address.toHex(address).toLowerCase()) ?? 0n,
    setTrxBalance: (address, sun) => trxBalances.set(TronWeb.address.toHex(address).toLowerCase(), sun),
    trxBalance: (address) => trxBalances.get(TronWeb.address.toHex(address).toLowerCase()),
    setBandwidth: (address, bytes) => bandwidths.set(TronWeb.address.toHex(address).toLowerCase(), bytes),
    bandwidth: (address) => bandwidths.get(TronWeb.address.toHex(address).toLowerCase()),
    loseNextBroadcast: (how) => {
      loseNext = how;
    },
    revertTransaction: (txID) => {
      const id = txID.toLowerCase();
      revertIds.add(id);
      const tx = transactions.get(id);
      if (tx && tx.block === undefined) tx.revert = true;
    },
    revertNextBroadcast: () => {
      revertNext = true;
    },
    lagSolidityReads: (blocks) => {
      solidityReadLag = blocks;
    },
    lagWalletReads: (blocks) => {
      walletReadLag = blocks;
    },
    lagAlternateRequests: (blocks) => {
      alternateLag = blocks;
      alternated = 0;
    },
    holdNext: (path) => {
      let arrived!: () => void;
      let release!: () => void;
      const reached = new Promise<void>((resolve) => (arrived = resolve));
      holds.set(path, { arrived, released: new Promise<void>((resolve) => (release = resolve)) });
      return { reached, release };
    },
    setDown: (value) => {
      down = value;
      if (down) for (const socket of sockets) socket.destroy();
    },
    pending: () => [...pendingIds],
    broadcasts,
    calls,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Util.printErrorMsg's shape, for what the servlet cannot parse. */
class ServletError extends Error {}

function sendJson(response: ServerResponse, body: unknown, status = 200): void {
  response.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
}

/** A function's selector from its signature, as Util.parseMethod makes it (tronweb's keccak256). */
function functionSelector(signature: string): string {
  return tronUtils.ethersUtils.keccak256(Buffer.from(signature.replace(/\s/g, ''), 'utf8')).slice(2, 10);
}

function utf8Hex(text: string): string {
  return Buffer.from(text, 'utf8').toString('hex');
}

/** An address field (41-hex or base58check) as lower-case 41-hex, or '' when it is neither. */
function hexAddress(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '';
  try {
    return TronWeb.address.toHex(value).toLowerCase();
  } catch {
    return '';
  }
}
