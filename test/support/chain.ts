// A local EVM chain for end-to-end tests: anvil (from the @foundry-rs/anvil npm package) on a free
// loopback port, a 6-decimal "Tether USD" ERC-20 compiled with solc-js, and raw JSON-RPC over fetch.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { bytesToHex, utf8ToBytes } from '@noble/hashes/utils.js';
import { freePort, startProcess, type Started } from './processes.js';

export type Hex = `0x${string}`;

/** The mnemonic anvil (and hardhat, ganache) use by default. */
export const DEFAULT_MNEMONIC = 'test test test test test test test test test test test junk';
export const DEFAULT_CHAIN_ID = 31337;

/** keccak256("Transfer(address,address,uint256)"): topic0 of every ERC-20 (and TRC-20) Transfer log. */
export const TRANSFER_TOPIC: Hex = keccak256Hex('Transfer(address,address,uint256)');

/** 10^15 units = 1,000,000,000 USDT at 6 decimals. */
export const DEFAULT_TOKEN_SUPPLY = 10n ** 15n;

export function keccak256Hex(text: string): Hex {
  return `0x${bytesToHex(keccak_256(utf8ToBytes(text)))}`;
}

/** The 4-byte selector of a function signature such as "transfer(address,uint256)". */
export function selector(signature: string): Hex {
  return keccak256Hex(signature).slice(0, 10) as Hex;
}

/** A 20-byte address as a 32-byte log topic (lowercase), e.g. topic1/topic2 of a Transfer log. */
export function addressTopic(address: string): Hex {
  return `0x${'0'.repeat(24)}${normalizeAddress(address).slice(2)}`;
}

/** Checks a 20-byte 0x-hex address and returns it lowercase. */
export function normalizeAddress(address: string): Hex {
  if (!/^0x[0-9a-fA-F]{40}$/.test(address)) throw new Error(`not a 20-byte 0x-hex address: ${address}`);
  return address.toLowerCase() as Hex;
}

export function toQuantity(value: bigint | number): Hex {
  return `0x${BigInt(value).toString(16)}`;
}

export class RpcError extends Error {
  constructor(
    readonly method: string,
    readonly code: number,
    readonly rpcMessage: string,
    readonly data?: unknown,
  ) {
    super(`${method} failed (${code}): ${rpcMessage}`);
    this.name = 'RpcError';
  }
}

export interface Log {
  address: Hex;
  topics: Hex[];
  data: Hex;
  blockNumber: Hex;
  blockHash: Hex;
  transactionHash: Hex;
  transactionIndex: Hex;
  logIndex: Hex;
  removed: boolean;
}

export interface Receipt {
  status: Hex;
  transactionHash: Hex;
  blockNumber: Hex;
  blockHash: Hex;
  contractAddress: Hex | null;
  logs: Log[];
}

export interface ChainOptions {
  /** Mine a block for every transaction as it arrives (default true); false = mine only on `mine()`. */
  automine?: boolean;
  /** Also mine a block every N seconds (anvil --block-time); off by default. */
  blockTime?: number;
  /** Number of funded default accounts (default 10). */
  accounts?: number;
  /** Keep anvil's per-request log lines in `output()` (default false: only the start-up banner is kept). */
  logs?: boolean;
}

export interface Token {
  /** Lowercase 0x-hex address of the deployed contract. */
  address: Hex;
  decimals: 6;
  /** Sends `transfer(to, amount)` from an unlocked account and resolves with the tx hash. Under automine
   * the tx is mined at once and a revert (e.g. balance too low) rejects; with automine off it is only
   * pending until the next `mine()`, and a revert shows as receipt status 0x0. */
  transfer(from: string, to: string, amount: bigint): Promise<Hex>;
  /** One transaction emitting one Transfer log per entry, in order (a contract-level batch transfer). */
  transferBatch(from: string, transfers: ReadonlyArray<{ to: string; amount: bigint }>): Promise<Hex>;
  balanceOf(address: string): Promise<bigint>;
  /** Sends `amount` from the deployer (accounts[0] unless deployed `from` another; it holds the supply) to each address and makes
   * sure those transfers are mined (mines one block itself when automine is off). */
  distribute(to: readonly string[], amount: bigint): Promise<void>;
}

export interface Chain {
  rpcUrl: string;
  chainId: number;
  /** The funded, unlocked default accounts, lowercase 0x-hex. accounts[0] deploys tokens. */
  accounts: Hex[];
  rpc<T = unknown>(method: string, params?: unknown[]): Promise<T>;
  /** Compiles (once per process) and deploys the test USDT from accounts[0] (or `from`), which receives
   * the whole supply (default 10^15 units); mines a block itself if automine is off. */
  deployToken(options?: { supply?: bigint; from?: string }): Promise<Token>;
  /** Polls for a receipt (does not mine). */
  waitForReceipt(hash: Hex, timeoutMs?: number): Promise<Receipt>;
  mine(blocks?: number): Promise<void>;
  setAutomine(on: boolean): Promise<void>;
  readonly automine: boolean;
  /** evm_snapshot: an id for `revert`. On anvil a snapshot is single-use: reverting to it consumes it. */
  snapshot(): Promise<Hex>;
  /** evm_revert: drops every block and pending transaction after the snapshot. */
  revert(id: Hex): Promise<void>;
  blockNumber(): Promise<bigint>;
  getLogs(filter: { address?: string | string[]; topics?: (Hex | Hex[] | null)[]; fromBlock?: bigint | string; toBlock?: bigint | string; blockHash?: Hex }): Promise<Log[]>;
  /** evm_increaseTime: moves the timestamp of the next mined block forward. */
  increaseTime(seconds: number): Promise<void>;
  /** anvil_setBalance: sets an address's native (ETH) balance in wei, e.g. to fund a hot wallet. */
  setBalance(address: string, wei: bigint): Promise<void>;
  /** anvil's console output so far (the banner; request logs too with `logs: true`). */
  output(): string;
  stop(): Promise<void>;
}

const requireHere = createRequire(import.meta.url);

/**
 * The anvil executable: $ANVIL_BIN if set, else the binary of @foundry-rs/anvil-linux-amd64, an
 * optional dependency of this project. Only that platform's package is published on the registry
 * these machines reach, so the wrapper package @foundry-rs/anvil (which lists all platforms) would
 * leave `npm ci` with a lockfile it cannot satisfy; elsewhere, set ANVIL_BIN.
 */
export function anvilBinary(): string {
  const fromEnv = process.env.ANVIL_BIN;
  if (fromEnv) return fromEnv;
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = `@foundry-rs/anvil-${process.platform}-${arch}`;
  try {
    const path = requireHere.resolve(`${pkg}/bin/anvil`);
    if (existsSync(path)) return path;
  } catch {
    // reported below
  }
  throw new Error(`anvil binary not found: ${pkg} is not installed (the project ships @foundry-rs/anvil-linux-amd64 as an optional dependency); set ANVIL_BIN to an anvil 1.7 binary`);
}

const running = new Set<Started>();
let exitHookInstalled = false;
function killOnExit(started: Started): void {
  running.add(started);
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // A test file that forgets stop() (or dies) must not leave anvil behind.
  process.once('exit', () => {
    for (const s of running) s.process.kill('SIGKILL');
  });
}

export async function startChain(options: ChainOptions = {}): Promise<Chain> {
  const binary = anvilBinary();
  let started: Started | undefined;
  let port = 0;
  for (let attempt = 1; !started; attempt++) {
    port = await freePort();
    const args = [
      '--host', '127.0.0.1',
      '--port', String(port),
      '--chain-id', String(DEFAULT_CHAIN_ID),
      '--mnemonic', DEFAULT_MNEMONIC,
      '--accounts', String(options.accounts ?? 10),
      // Transactions of one block in arrival order, so log indexes follow the order of the sends.
      '--order', 'fifo',
      '--color', 'never',
    ];
    if (options.automine === false) args.push('--no-mining');
    if (options.blockTime !== undefined) args.push('--block-time', String(options.blockTime));
    try {
      started = await startProcess(binary, args, /Listening on 127\.0\.0\.1:\d+/);
    } catch (error) {
      // The free port can be taken between freePort() and anvil's bind: try another one.
      if (attempt >= 3 || !/address already in use|os error 98/i.test(String(error))) throw error;
    }
  }
  const anvil = started;
  killOnExit(anvil);
  if (!options.logs) {
    // anvil prints a line per request and per mined block: stop collecting, but keep draining the pipe.
    anvil.process.stdout?.removeAllListeners('data');
    anvil.process.stdout?.resume();
  }

  const rpcUrl = `http://127.0.0.1:${port}`;
  let nextId = 1;
  const rpc = async <T = unknown>(method: string, params: unknown[] = []): Promise<T> => {
    const response = await fetch(rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: nextId++, method, params }),
    });
    if (!response.ok) throw new Error(`${method}: HTTP ${response.status} ${await response.text()}`);
    const body = (await response.json()) as { result?: T; error?: { code: number; message: string; data?: unknown } };
    if (body.error) throw new RpcError(method, body.error.code, body.error.message, body.error.data);
    return body.result as T;
  };

  let automine = options.automine !== false;
  const accounts = (await rpc<string[]>('eth_accounts')).map(normalizeAddress);
  const deployer = accounts[0];
  if (!deployer) throw new Error('anvil reported no accounts');

  const mine = async (blocks = 1) => {
    await rpc('anvil_mine', [toQuantity(blocks)]);
  };

  const waitForReceipt = async (hash: Hex, timeoutMs = 10_000): Promise<Receipt> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const receipt = await rpc<Receipt | null>('eth_getTransactionReceipt', [hash]);
      if (receipt) return receipt;
      if (Date.now() > deadline) throw new Error(`no receipt for ${hash} after ${timeoutMs} ms (automine ${automine ? 'on' : 'off'}: mine() first?)`);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };

  /** Waits for the receipts of transactions that must be mined now, mining one block if automine is off. */
  const settle = async (hashes: Hex[]): Promise<Receipt[]> => {
    if (!automine) await mine(1);
    const receipts = await Promise.all(hashes.map((hash) => waitForReceipt(hash)));
    for (const receipt of receipts) {
      if (receipt.status !== '0x1') throw new Error(`transaction ${receipt.transactionHash} reverted`);
    }
    return receipts;
  };

  const send = (from: string, to: Hex | undefined, data: Hex): Promise<Hex> =>
    rpc<Hex>('eth_sendTransaction', [{ from: normalizeAddress(from), ...(to ? { to } : {}), data }]);

  /** Sends a call; under automine anvil has mined it when eth_sendTransaction returns: check it. */
  const sendChecked = async (from: string, to: Hex, data: Hex): Promise<Hex> => {
    const hash = await send(from, to, data);
    if (automine) {
      const receipt = await waitForReceipt(hash);
      if (receipt.status !== '0x1') throw new Error(`transaction ${hash} from ${from} reverted`);
    }
    return hash;
  };

  const deployToken = async (deployOptions: { supply?: bigint; from?: string } = {}): Promise<Token> => {
    const { bytecode } = await compileToken();
    const data = `${bytecode}${encodeUint(deployOptions.supply ?? DEFAULT_TOKEN_SUPPLY)}` as Hex;
    const owner = normalizeAddress(deployOptions.from ?? deployer);
    const hash = await send(owner, undefined, data);
    const [receipt] = await settle([hash]);
    if (!receipt?.contractAddress) throw new Error(`token deployment ${hash} created no contract`);
    const address = normalizeAddress(receipt.contractAddress);

    const token: Token = {
      address,
      decimals: 6,
      transfer: (from, to, amount) => sendChecked(from, address, `${TRANSFER_SELECTOR}${encodeAddress(to)}${encodeUint(amount)}` as Hex),
      transferBatch: (from, transfers) => sendChecked(from, address, encodeTransferBatch(transfers)),
      balanceOf: async (owner) => {
        const result = await rpc<Hex>('eth_call', [{ to: address, data: `${BALANCE_OF_SELECTOR}${encodeAddress(owner)}` }, 'latest']);
        return BigInt(result);
      },
      distribute: async (to, amount) => {
        const hashes: Hex[] = [];
        for (const recipient of to) hashes.push(await token.transfer(owner, recipient, amount));
        await settle(hashes);
      },
    };
    return token;
  };

  return {
    rpcUrl,
    chainId: DEFAULT_CHAIN_ID,
    accounts,
    rpc,
    deployToken,
    waitForReceipt,
    mine,
    setAutomine: async (on) => {
      await rpc('evm_setAutomine', [on]);
      automine = on;
    },
    get automine() {
      return automine;
    },
    snapshot: () => rpc<Hex>('evm_snapshot'),
    revert: async (id) => {
      const ok = await rpc<boolean>('evm_revert', [id]);
      if (!ok) throw new Error(`evm_revert(${id}) failed: unknown or already used snapshot`);
    },
    blockNumber: async () => BigInt(await rpc<Hex>('eth_blockNumber')),
    getLogs: (filter) => {
      const block = (value: bigint | string | undefined) => (typeof value === 'bigint' ? toQuantity(value) : value);
      const request: Record<string, unknown> = { ...filter };
      if (filter.fromBlock !== undefined) request.fromBlock = block(filter.fromBlock);
      if (filter.toBlock !== undefined) request.toBlock = block(filter.toBlock);
      return rpc<Log[]>('eth_getLogs', [request]);
    },
    increaseTime: async (seconds) => {
      await rpc('evm_increaseTime', [seconds]);
    },
    setBalance: async (address, wei) => {
      await rpc('anvil_setBalance', [normalizeAddress(address), toQuantity(wei)]);
    },
    output: anvil.output,
    stop: async () => {
      running.delete(anvil);
      await anvil.stop();
    },
  };
}

// ---- The token contract ----

const TRANSFER_SELECTOR = selector('transfer(address,uint256)');
const BALANCE_OF_SELECTOR = selector('balanceOf(address)');
const TRANSFER_BATCH_SELECTOR = selector('transferBatch(address[],uint256[])');

/** A minimal ERC-20 shaped like USDT (6 decimals); the constructor mints `supply` to the deployer. */
export const TOKEN_SOURCE = `// SPDX-License-Identifier: MIT
pragma solidity 0.8.37;

contract TetherToken {
    string public constant name = "Tether USD";
    string public constant symbol = "USDT";
    uint8 public constant decimals = 6;
    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);

    constructor(uint256 supply) {
        totalSupply = supply;
        balanceOf[msg.sender] = supply;
        emit Transfer(address(0), msg.sender, supply);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        _move(msg.sender, to, value);
        return true;
    }

    /// One Transfer log per entry, in order, all in one transaction.
    function transferBatch(address[] calldata to, uint256[] calldata values) external returns (bool) {
        require(to.length == values.length, "length mismatch");
        for (uint256 i = 0; i < to.length; i++) _move(msg.sender, to[i], values[i]);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        require(allowed >= value, "allowance");
        if (allowed != type(uint256).max) allowance[from][msg.sender] = allowed - value;
        _move(from, to, value);
        return true;
    }

    function _move(address from, address to, uint256 value) private {
        require(balanceOf[from] >= value, "balance");
        unchecked {
            balanceOf[from] -= value;
        }
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }
}
`;

let compiled: Promise<{ bytecode: Hex; abi: unknown[] }> | undefined;

/** Compiles TOKEN_SOURCE with solc-js (standard JSON) once per process. */
export function compileToken(): Promise<{ bytecode: Hex; abi: unknown[] }> {
  compiled ??= (async () => {
    const { default: solc } = await import('solc');
    const input = {
      language: 'Solidity',
      sources: { 'TetherToken.sol': { content: TOKEN_SOURCE } },
      settings: {
        evmVersion: 'cancun',
        optimizer: { enabled: true, runs: 200 },
        outputSelection: { '*': { TetherToken: ['abi', 'evm.bytecode.object'] } },
      },
    };
    const output = JSON.parse(solc.compile(JSON.stringify(input))) as {
      errors?: { severity: string; formattedMessage: string }[];
      contracts?: Record<string, Record<string, { abi: unknown[]; evm: { bytecode: { object: string } } }>>;
    };
    const errors = (output.errors ?? []).filter((e) => e.severity === 'error');
    if (errors.length > 0) throw new Error(`solc: ${errors.map((e) => e.formattedMessage).join('\n')}`);
    const contract = output.contracts?.['TetherToken.sol']?.TetherToken;
    if (!contract?.evm.bytecode.object) throw new Error('solc produced no bytecode for TetherToken');
    return { bytecode: `0x${contract.evm.bytecode.object}`, abi: contract.abi };
  })();
  compiled.catch(() => {
    compiled = undefined;
  });
  return compiled;
}

// ---- ABI encoding (only the static words the kit needs) ----

function encodeUint(value: bigint | number): string {
  const n = BigInt(value);
  if (n < 0n || n >= 1n << 256n) throw new RangeError(`uint256 out of range: ${value}`);
  return n.toString(16).padStart(64, '0');
}

function encodeAddress(address: string): string {
  return normalizeAddress(address).slice(2).padStart(64, '0');
}

function encodeTransferBatch(transfers: ReadonlyArray<{ to: string; amount: bigint }>): Hex {
  const n = transfers.length;
  // Head: offsets of the two dynamic arrays; tail: each array as length + items.
  const toOffset = 64;
  const valuesOffset = toOffset + 32 * (1 + n);
  return `${TRANSFER_BATCH_SELECTOR}${encodeUint(toOffset)}${encodeUint(valuesOffset)}${encodeUint(n)}${transfers
    .map((t) => encodeAddress(t.to))
    .join('')}${encodeUint(n)}${transfers.map((t) => encodeUint(t.amount)).join('')}` as Hex;
}
