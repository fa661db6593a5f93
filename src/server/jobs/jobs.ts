// The platform's background work: a scanner per network with an RPC URL, the callback dispatcher, the
// expiry job, the pruning of old events, in the sandbox the settlement of withdrawals, and a payout job per
// network with a node to pay through (Ethereum's RPC URL, Tron's TRON_API_URL). Started by `partner-api
// serve`, stopped before the database closes.
import { CallbackDispatcher } from '../callbacks/dispatcher.js';
import { ChainScanner } from '../chain/scanner.js';
import type { Config } from '../config.js';
import type { Database } from '../db/database.js';
import { expireOrders } from '../orders/expiry.js';
import { PRUNE_BATCH, pruneEvents } from '../callbacks/retention.js';
import { JobLease, type LeaseGauge } from './lease.js';
import { runRepeatedly } from '../shared/repeat.js';
import { SANDBOX_SETTLE_BATCH, settleDueSandboxWithdrawals } from '../withdrawals/sandbox-settlement.js';
import { ConfigError } from '../config.js';
import { JsonRpcClient } from '../chain/rpc.js';
import { networkHalt } from '../chain/halt.js';
import { EthereumNode } from '../payouts/ethereum-node.js';
import { EthereumPayer } from '../payouts/ethereum-payer.js';
import { TronNode } from '../payouts/tron-node.js';
import { TronPayer } from '../payouts/tron-payer.js';
import { toTronAddress } from '../addresses/derivation.js';
import { checkKeyFile, HotWalletKeyError, loadHotWallet, type HotWallet } from '../payouts/hot-wallet.js';
import type { PayoutGauges } from '../payouts/payout-gauges.js';
import type { Network } from '../shared/network.js';
import type { ScannerGauges } from '../chain/scanner.js';
import type { SecretKeeper } from '../merchants/secrets.js';
import type { Clock } from '../shared/time.js';
import type { Logger } from '../shared/logger.js';

export interface Jobs {
  stop(): Promise<void>;
}

const EXPIRY_BATCH = 500;
/** How often the events older than the retention are removed: the feed keeps them at least that long. */
const PRUNE_INTERVAL_MS = 3_600_000;
/** How often the sandbox looks for withdrawals due to settle by themselves. */
const SANDBOX_SETTLE_INTERVAL_MS = 1000;
/** Tron makes a block every 3 seconds: how often its payer looks when no scanner's interval is set. */
const TRON_BLOCK_SECONDS = 3;

/** A Tron contract as the wiring holds it (0x hex once settled) in its base58check form (T…). */
function tronAddressOf(contract: string): string {
  return contract.startsWith('0x') ? toTronAddress(Buffer.from(contract.slice(2), 'hex')) : contract;
}

/**
 * A payer's round, skipped while its network's watch is halted after a deep reorg: its balances may hold
 * deposits the reorg removed, and its chain is in question, so nothing is signed, sent or followed on it
 * until the operator resumes it (queued withdrawals stay queued). Said once as it starts waiting, once as it goes on.
 */
function unlessHalted(db: Database, network: Network, round: () => Promise<boolean>, log: Logger | undefined): () => Promise<boolean> {
  let waiting = false;
  return async () => {
    const halted = await networkHalt(db, network);
    if (halted) {
      if (!waiting) log?.error({ network, haltedAt: halted.haltedAt }, `paying ${network} withdrawals waits: the network is HALTED after a deep reorg, until partner-api chain resume --blockchain ${network.toLowerCase()}`);
      waiting = true;
      return false;
    }
    if (waiting) log?.info?.({ network }, `${network} is resumed: paying its withdrawals again`);
    waiting = false;
    return round();
  };
}

/**
 * The payouts' metrics known at the start: the low-balance thresholds configured, beside the balances the
 * payers read, and each network's counters at 0, so that an alert on their increase sees the first one.
 * A gauge is a float64, as the balance beside it: exact to 2^53 units, beyond (wei past 0.009 ETH) rounded to
 * 16 significant digits, which a threshold's comparison does not notice.
 */
function payoutMetrics(config: Config, gauges: PayoutGauges): void {
  for (const network of ['Ethereum', 'Tron'] as const) {
    gauges.confirmed.inc({ network }, 0);
    gauges.failed.inc({ network }, 0);
    for (const [asset, units] of Object.entries(config.payouts.lowBalance[network])) gauges.lowBalance.set({ network, asset }, Number(units));
  }
}

/** A key file's refusal as a configuration error naming its setting (exit 78); other errors as they are. */
async function keyFileSetting<T>(network: Network, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof HotWalletKeyError) throw new ConfigError(`${network.toUpperCase()}_PAYOUT_KEY_FILE: ${error.message}`);
    throw error;
  }
}

/** A network's hot wallet, read from its key file by the code that signs; none without a file. A bad file stops the start. */
async function hotWallet(config: Config, network: Network): Promise<HotWallet | undefined> {
  const file = config.payouts.keyFiles[network];
  return file === undefined ? undefined : keyFileSetting(network, () => loadHotWallet(network, file));
}

/**
 * The key files' kind, owner and mode, checked without reading them: serve calls this before the
 * database opens or the port listens, so that a bad file stops the start before anything runs.
 */
export async function checkHotWalletFiles(config: Config): Promise<void> {
  for (const network of ['Ethereum', 'Tron'] as const) {
    const file = config.payouts.keyFiles[network];
    if (file !== undefined) await keyFileSetting(network, () => checkKeyFile(network, file));
  }
}

/** Starts the jobs; refuses (ScannerStartError) a network that cannot be scanned safely. */
export async function startJobs(deps: { config: Config; db: Database; secrets: SecretKeeper; now: Clock; log?: Logger; gauges?: ScannerGauges; leaseGauge?: LeaseGauge; payoutGauges?: PayoutGauges }): Promise<Jobs> {
  const { config, db, now, log } = deps;
  const ethereumWallet = await hotWallet(config, 'Ethereum');
  const tronWallet = await hotWallet(config, 'Tron');
  const scanners = (['Tron', 'Ethereum'] as const).flatMap((network) => {
    const { chain, confirmations } = config.networks[network];
    if (!chain) return [];
    return [new ChainScanner({ network, chain, confirmations, watchWindowSeconds: config.watchWindowSeconds, db, now, ...(log ? { log } : {}), ...(deps.gauges ? { gauges: deps.gauges } : {}) })];
  });
  for (const scanner of scanners) await scanner.prepare();
  const scannedNetworks = scanners.map((s) => s.network);
  const dispatcher = new CallbackDispatcher({ db, secrets: deps.secrets, config: config.callbacks, mode: config.mode, now, ...(log ? { log } : {}) });
  // Every job but the dispatcher runs in one instance at a time, under its lease; the dispatcher runs in all (the callbacks it claims are each held under a lease of their own).
  const leaseOf = (job: string) => new JobLease(db, job, log, deps.leaseGauge);
  const scanJobs = scanners.map((scanner) => ({ scanner, lease: leaseOf(`scan:${scanner.network}`) }));
  const expiryLease = leaseOf('expire-orders');
  for (const { scanner, lease } of scanJobs) scanner.start(() => lease.holds());
  dispatcher.start();
  const expiry = runRepeatedly(
    // A full batch: more are due. By the database's clock; orders of networks with a scan position by chain time.
    async () => (await expiryLease.holds()) && (await expireOrders(db, undefined, scannedNetworks, EXPIRY_BATCH)) === EXPIRY_BATCH,
    config.expiryIntervalSeconds * 1000,
    (error) => log?.warn({ err: error }, 'order expiry failed'),
  );
  const pruneLease = leaseOf('prune-events');
  const prune = runRepeatedly(
    async () => (await pruneLease.holds()) && (await pruneEvents(db, config.eventRetentionDays)) === PRUNE_BATCH,
    PRUNE_INTERVAL_MS,
    (error) => log?.warn({ err: error }, 'pruning events failed'),
  );
  // The sandbox's withdrawals through the API settle by themselves (withdrawals/sandbox-settlement.ts).
  const settleLease = leaseOf('settle-sandbox-withdrawals');
  const settle =
    config.mode === 'sandbox'
      ? runRepeatedly(
          async () => (await settleLease.holds()) && (await settleDueSandboxWithdrawals(db)) === SANDBOX_SETTLE_BATCH,
          SANDBOX_SETTLE_INTERVAL_MS,
          (error) => log?.warn({ err: error }, 'settling sandbox withdrawals failed'),
        )
      : undefined;
  if (deps.payoutGauges) payoutMetrics(config, deps.payoutGauges);
  // Paying withdrawals on chain, one payer per network at a time (the lease, each write of a round fenced
  // by it: payouts/payout-job.ts): where the network has a
  // node to ask, with its hot wallet if it has one (without, it checks the operator's recorded payments).
  const payoutLeases: JobLease[] = [];
  const payouts: { stop(): Promise<void> }[] = [];
  const ethereumChain = config.networks.Ethereum.chain;
  if (ethereumChain) {
    const payer = new EthereumPayer({
      db,
      node: new EthereumNode(new JsonRpcClient(ethereumChain.rpcUrl)),
      wallet: ethereumWallet,
      token: ethereumChain.tokenContract,
      confirmations: config.networks.Ethereum.confirmations,
      finality: ethereumChain.finality,
      maxFeePerGas: config.payouts.ethereumMaxFeePerGas,
      replaceAfterSeconds: config.payouts.replaceAfterSeconds,
      fundsWaitHours: config.payouts.fundsWaitHours,
      log,
      gauges: deps.payoutGauges,
    });
    const lease = leaseOf('payout:Ethereum');
    payoutLeases.push(lease);
    const round = unlessHalted(db, 'Ethereum', () => payer.round(lease.fence()), log);
    payouts.push(runRepeatedly(async () => (await lease.holds()) && round(), ethereumChain.pollIntervalSeconds * 1000, (error) => log?.warn({ err: error }, 'paying Ethereum withdrawals failed')));
  }
  // Tron's payouts go through its HTTP API (TRON_API_URL), not the JSON-RPC the scanner reads.
  const tronApiUrl = config.payouts.tronApiUrl;
  if (tronApiUrl) {
    const tronChain = config.networks.Tron.chain;
    const payer = new TronPayer({
      db,
      node: new TronNode(tronApiUrl, { apiKey: config.payouts.tronApiKey }),
      wallet: tronWallet,
      token: tronAddressOf(config.networks.Tron.tokenContract),
      feeLimitSun: config.payouts.tronFeeLimitSun,
      expirationSeconds: config.payouts.tronExpirationSeconds,
      fundsWaitHours: config.payouts.fundsWaitHours,
      log,
      gauges: deps.payoutGauges,
    });
    const lease = leaseOf('payout:Tron');
    payoutLeases.push(lease);
    const round = unlessHalted(db, 'Tron', () => payer.round(lease.fence()), log);
    payouts.push(runRepeatedly(async () => (await lease.holds()) && round(), (tronChain?.pollIntervalSeconds ?? TRON_BLOCK_SECONDS) * 1000, (error) => log?.warn({ err: error }, 'paying Tron withdrawals failed')));
  }
  return {
    async stop() {
      await Promise.all([...scanners.map((s) => s.stop()), dispatcher.stop(), expiry.stop(), prune.stop(), settle?.stop(), ...payouts.map((p) => p.stop())]);
      await Promise.all([...scanJobs.map((j) => j.lease.release()), expiryLease.release(), pruneLease.release(), settleLease.release(), ...payoutLeases.map((l) => l.release())]);
    },
  };
}
