// Payouts on a real local chain (npm run bench:payouts): how many withdrawals a minute the platform pays
// on anvil, and how long each takes from the API's create to DONE (signed, written, broadcast, mined,
// confirmed) at 1 confirmation and at the default ETHEREUM_CONFIRMATIONS, on one instance on PGlite and
// on two `partner-api serve` instances on one PostgreSQL database; and what the payout job costs the
// platform while there is nothing to pay, side by side with the same platform without one (no hot
// wallet, no chain): CPU time of the whole process tree, and the node calls a round.
//
//   npm run bench:payouts   (BENCH_PAYOUTS a run, 60; BENCH_IDLE_SECONDS, 30; PostgreSQL: BENCH_DATABASE_URL
//                            or TEST_DATABASE_URL, else a throwaway cluster)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { createPartnerClient } from '../src/client/index.js';
import { HotWallet } from '../src/server/payouts/hot-wallet.js';
import { orderRequest } from '../test/fixtures/orders.js';
import { startChain, type Chain, type Token } from '../test/support/chain.js';
import { runCommand } from '../test/support/cli.js';
import { databaseUrl, onServer } from '../test/support/database-templates.js';
import { startPartnerApi, type RunningPartnerApi } from '../test/support/partner-api.js';
import { startFaultProxy } from '../test/support/rpc-fault-proxy.js';
import { buildWhatChanged, publishResults, startPostgres, testableConfig } from './support.js';

const PAYOUTS = Number(process.env.BENCH_PAYOUTS ?? 60);
const POLL_MS = 200; // how often the bench reads the list of DONE withdrawals
const DEFAULT_CONFIRMATIONS = testableConfig().networks.Ethereum.confirmations; // the platform's default ETHEREUM_CONFIRMATIONS
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
const TICKS = 100; // clock ticks a second (USER_HZ)

/** CPU seconds (user + system) of a process so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

interface Setup {
  chainUrl?: string;
  token?: string;
  keyFile?: string;
  /** A PostgreSQL database for every instance; PGlite in the first instance's data directory without. */
  databaseUrl?: string;
  instances?: number;
  confirmations?: number;
}

/** A live merchant allowed to withdraw, and `setup.instances` (1) `partner-api serve` processes started one after another. */
async function platformOn(setup: Setup, dir: string, name: string): Promise<{ platforms: RunningPartnerApi[]; merchant: { apiKey: string; apiSecret: string } }> {
  const seed = randomBytes(32);
  const env: Record<string, string> = {
    PARTNER_API_MODE: 'live',
    PUBLIC_URL: 'https://pay.partner.example',
    DATABASE_URL: setup.databaseUrl ?? '',
    DATA_DIR: join(dir, name),
    SECRET_KEY: randomBytes(32).toString('base64'),
    ETHEREUM_XPUB: HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'").publicExtendedKey,
    TRON_XPUB: HDKey.fromMasterSeed(seed).derive("m/44'/195'/0'").publicExtendedKey,
    ETHEREUM_WITHDRAWAL_FEE: '0',
    ETHEREUM_MIN_WITHDRAWAL: '1',
    ETHEREUM_CONFIRMATIONS: String(setup.confirmations ?? 1),
    ETHEREUM_POLL_SECONDS: '1',
    LOG_LEVEL: 'silent',
    RATE_LIMIT: '1000000/1',
    ...(setup.chainUrl ? { ETHEREUM_RPC_URL: setup.chainUrl, ETHEREUM_TOKEN_CONTRACT: setup.token! } : {}),
    ...(setup.keyFile ? { ETHEREUM_PAYOUT_KEY_FILE: setup.keyFile } : {}),
  };
  const merchant = JSON.parse((await runCommand(['merchants', 'create', '--name', name, '--json'], env)).stdout) as { apiKey: string; apiSecret: string };
  await runCommand(['merchants', 'set-withdrawals', '--api-key', merchant.apiKey, '--enabled'], env);
  const platforms: RunningPartnerApi[] = [];
  for (let i = 0; i < (setup.instances ?? 1); i++) {
    platforms.push(await startPartnerApi({ ...env, DATA_DIR: i === 0 ? env.DATA_DIR! : join(dir, `${name}-${i}`) }));
    running.push(platforms[i]!);
  }
  return { platforms, merchant };
}

/** The value at rank ⌈q·n⌉ of sorted `values` (nearest rank). */
function percentile(sorted: number[], q: number): number {
  return sorted[Math.max(0, Math.ceil(q * sorted.length) - 1)]!;
}

interface Run {
  instances: number;
  database: 'PGlite' | 'PostgreSQL';
  confirmations: number;
  payouts: number;
  /** From the first create's request to the last DONE seen. */
  seconds: number;
  perMinute: number;
  /** Each withdrawal's time from its create's answer to the poll that first saw it DONE, ms. */
  p50: number;
  p99: number;
  sent: number;
}

/**
 * PAYOUTS withdrawals of one fresh merchant created at once (spread over the instances) and paid by a
 * hot wallet of their own; the DONE list polled every POLL_MS (from each instance in turn) until every
 * one is seen DONE. Then the checks: the hot wallet sent exactly one transaction a payout and each
 * destination holds exactly its amount.
 */
async function payoutRun(chain: Chain, token: Token, dir: string, database: Run['database'], databaseUrl: string | undefined, instances: number, confirmations: number): Promise<Run> {
  const name = `run-${database}-${instances}-${confirmations}`;
  const keyHex = randomBytes(32).toString('hex');
  const wallet = new HotWallet('Ethereum', Buffer.from(keyHex, 'hex'));
  const keyFile = join(dir, `${name}.key`);
  writeFileSync(keyFile, keyHex, { mode: 0o600 });
  await chain.setBalance(wallet.address, 10n ** 21n);
  await token.distribute([wallet.address], 100_000_000_000n);
  const { platforms, merchant } = await platformOn({ chainUrl: chain.rpcUrl, token: token.address, keyFile, databaseUrl, instances, confirmations }, dir, name);
  const clients = platforms.map((p) => createPartnerClient({ baseUrl: p.baseUrl, ...merchant }));
  const order = await clients[0]!.POST('/partner/v1/platforms/orders', { body: orderRequest('bench-funding', { blockchain: 'Ethereum' }) });
  await token.transfer(chain.accounts[1]!, order.data!.address, 50_000_000_000n);
  while ((await clients[0]!.getBalances()).find((b) => b.blockchain === 'Ethereum')!.available < 50_000_000_000) await new Promise((resolve) => setTimeout(resolve, 200));

  const amounts = Array.from({ length: PAYOUTS }, (_, i) => 1_000_000 + i * 10_000); // smallest units: 1.00, 1.01, … USDT
  const destinations = amounts.map(() => `0x${randomBytes(20).toString('hex')}`);
  const answered: number[] = [];
  const seenDone = new Map<string, number>();
  const started = performance.now();
  let creating = true;
  let failed = false;
  const polling = (async () => {
    for (let poll = 0; !failed && (creating || seenDone.size < PAYOUTS); poll++) {
      if (performance.now() - started > 600_000) throw new Error(`${seenDone.size} of ${PAYOUTS} payouts DONE after 10 minutes`);
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      for await (const w of clients[poll % clients.length]!.listWithdrawals({ status: 'DONE', limit: 100 })) if (!seenDone.has(w.uuid)) seenDone.set(w.uuid, performance.now());
    }
  })();
  const creates = Promise.all(
    amounts.map(async (amount, i) => {
      const w = await clients[i % clients.length]!.createWithdrawal({ externalId: `bench-${i}`, blockchain: 'Ethereum', currency: 'USDT', amount: amount / 1e6, destinationAddress: destinations[i]! });
      answered[i] = performance.now();
      return w.uuid;
    }),
  );
  creates.then(
    () => (creating = false),
    () => (failed = true), // the poll stops at its next round
  );
  const uuids = await creates;
  await polling;
  const last = Math.max(...seenDone.values());
  const latencies = uuids.map((uuid, i) => seenDone.get(uuid)! - answered[i]!).sort((a, b) => a - b);

  const sent = Number(BigInt(await chain.rpc<string>('eth_getTransactionCount', [wallet.address, 'latest'])));
  if (sent !== PAYOUTS) throw new Error(`${name}: the hot wallet sent ${sent} transactions for ${PAYOUTS} payouts`);
  for (let i = 0; i < PAYOUTS; i++) {
    const held = await token.balanceOf(destinations[i]!);
    if (held !== BigInt(amounts[i]!)) throw new Error(`${name}: ${destinations[i]} holds ${held}, not ${amounts[i]}`);
  }
  await Promise.all(platforms.map((p) => p.stop()));
  const seconds = (last - started) / 1000;
  return { instances, database, confirmations, payouts: PAYOUTS, seconds, perMinute: (PAYOUTS * 60) / seconds, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), sent };
}

buildWhatChanged();
const postgres = startPostgres(54345);
if (!postgres) throw new Error('bench:payouts needs PostgreSQL (two instances share one database)');
const chain = await startChain({ blockTime: 1 });
const dir = mkdtempSync(join(tmpdir(), 'partner-bench-payouts-'));
const running: RunningPartnerApi[] = [];
const databases: string[] = [];
try {
  const token = await chain.deployToken();
  const keyHex = randomBytes(32).toString('hex');
  const wallet = new HotWallet('Ethereum', Buffer.from(keyHex, 'hex'));
  const keyFile = join(dir, 'payout.key');
  writeFileSync(keyFile, keyHex, { mode: 0o600 });
  await chain.setBalance(wallet.address, 10n ** 21n);
  await token.distribute([wallet.address, chain.accounts[1]!], 1_000_000_000_000n);

  // Idle, nothing to pay, side by side: the same platform scanning the same chain with a hot wallet
  // (its payout job pays) and without one (the job only follows the operator's recorded payments), and
  // one without a chain (no scanner, no payout job). Each reaches the node through a proxy of its own.
  const proxies = [await startFaultProxy(chain.rpcUrl), await startFaultProxy(chain.rpcUrl)];
  const withWallet = await platformOn({ chainUrl: proxies[0]!.url, token: token.address, keyFile }, dir, 'idle-with-wallet');
  const withoutWallet = await platformOn({ chainUrl: proxies[1]!.url, token: token.address }, dir, 'idle-without-wallet');
  const withoutChain = await platformOn({}, dir, 'idle-without-chain');
  await new Promise((resolve) => setTimeout(resolve, 3000)); // past the start
  const pids = [withWallet, withoutWallet, withoutChain].map((p) => p.platforms[0]!.process.process.pid!);
  const callsBefore = proxies.map((p) => p.calls.length);
  const before = pids.map(cpuSeconds);
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const idle = pids.map((pid, i) => ((cpuSeconds(pid) - before[i]!) * 1000 * 60) / IDLE_SECONDS); // CPU ms a minute
  const idleCalls = proxies.map((p, i) => (p.calls.length - callsBefore[i]!) / IDLE_SECONDS); // node calls a second
  await Promise.all(running.splice(0).map((p) => p.stop()));
  await Promise.all(proxies.map((p) => p.close()));

  // Payouts: at 1 confirmation and at the default, on one instance on PGlite and on two on PostgreSQL.
  const runs: Run[] = [];
  for (const confirmations of [1, DEFAULT_CONFIRMATIONS]) {
    runs.push(await payoutRun(chain, token, dir, 'PGlite', undefined, 1, confirmations));
    await Promise.all(running.splice(0).map((p) => p.stop()));
    const name = `partner_bench_payouts_${randomBytes(6).toString('hex')}`;
    await onServer(postgres.url, `CREATE DATABASE ${name}`);
    databases.push(name);
    runs.push(await payoutRun(chain, token, dir, 'PostgreSQL', databaseUrl(postgres.url, name), 2, confirmations));
    await Promise.all(running.splice(0).map((p) => p.stop()));
  }

  publishResults(
    'payouts',
    [
      `anvil mining a block a second, the payout job's poll 1 s; real \`partner-api serve\` processes (live mode, logs off): one on PGlite, or two on one PostgreSQL database (${postgres.origin}), the creates spread over both. Each run: a fresh merchant's withdrawals created at once, paid by a hot wallet of their own; the list of DONE withdrawals polled every ${POLL_MS} ms (from each instance in turn). Request-to-DONE: from a create's answer to the poll that first saw it DONE. After each run the hot wallet had sent exactly one transaction a payout and each destination held exactly its amount.`,
      '',
      '| instances | database | confirmations | payouts | from the first create to the last DONE | payouts a minute | request-to-DONE p50 | p99 | transactions the hot wallet sent |',
      '|---:|---|---:|---:|---:|---:|---:|---:|---:|',
      ...runs.map((r) => `| ${r.instances} | ${r.database} | ${r.confirmations}${r.confirmations === DEFAULT_CONFIRMATIONS ? ' (default)' : ''} | ${r.payouts} | ${r.seconds.toFixed(1)} s | ${r.perMinute.toFixed(0)} | ${(r.p50 / 1000).toFixed(1)} s | ${(r.p99 / 1000).toFixed(1)} s | ${r.sent} |`),
      '',
      `| idle, ${IDLE_SECONDS} s, nothing to pay | CPU ms a minute (the process) | / the one without a hot wallet | node calls a second |\n|---|---:|---:|---:|`,
      `| scanning Ethereum, the payout job with a hot wallet | ${idle[0]!.toFixed(0)} | ${(idle[0]! / idle[1]!).toFixed(2)} | ${idleCalls[0]!.toFixed(2)} |`,
      `| scanning Ethereum, the payout job without one (following recorded payments) | ${idle[1]!.toFixed(0)} | 1.00 | ${idleCalls[1]!.toFixed(2)} |`,
      `| no chain (no scanner, no payout job) | ${idle[2]!.toFixed(0)} | ${(idle[2]! / idle[1]!).toFixed(2)} | 0 |`,
    ].join('\n'),
    { pollMs: POLL_MS, runs, idleCpuMsPerMinute: { withWallet: idle[0], withoutWallet: idle[1], withoutChain: idle[2] }, idleCallsPerSecond: { withWallet: idleCalls[0], withoutWallet: idleCalls[1] } },
  );
} finally {
  await Promise.all(running.map((p) => p.stop()));
  for (const name of databases) await onServer(postgres.url, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await chain.stop();
  postgres.stop();
  rmSync(dir, { recursive: true, force: true });
}
