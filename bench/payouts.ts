// Payouts on a real local chain (npm run bench:payouts): how many withdrawals a minute the platform pays
// on anvil, from the API's create to DONE (signed, written, broadcast, mined, confirmed), and what the
// payout job costs the platform while there is nothing to pay, side by side with the same platform
// without one (no hot wallet, no chain): CPU time of the whole process tree, and the node calls a round.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HDKey } from '@scure/bip32';
import { createPartnerClient } from '../src/client/index.js';
import { HotWallet } from '../src/server/payouts/hot-wallet.js';
import { orderRequest } from '../test/fixtures/orders.js';
import { startChain } from '../test/support/chain.js';
import { runCommand } from '../test/support/cli.js';
import { startPartnerApi, type RunningPartnerApi } from '../test/support/partner-api.js';
import { startFaultProxy } from '../test/support/rpc-fault-proxy.js';
import { buildWhatChanged, publishResults } from './support.js';

const PAYOUTS = Number(process.env.BENCH_PAYOUTS ?? 60);
const IDLE_SECONDS = Number(process.env.BENCH_IDLE_SECONDS ?? 30);
const TICKS = 100; // clock ticks a second (USER_HZ)

/** CPU seconds (user + system) of a process so far. */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICKS;
}

async function platformOn(chainUrl: string | undefined, token: string | undefined, keyFile: string | undefined, dir: string, name: string): Promise<{ platform: RunningPartnerApi; merchant: { apiKey: string; apiSecret: string } }> {
  const seed = randomBytes(32);
  const env: Record<string, string> = {
    PARTNER_API_MODE: 'live',
    PUBLIC_URL: 'https://pay.partner.example',
    DATABASE_URL: '',
    DATA_DIR: join(dir, name),
    SECRET_KEY: randomBytes(32).toString('base64'),
    ETHEREUM_XPUB: HDKey.fromMasterSeed(seed).derive("m/44'/60'/0'").publicExtendedKey,
    TRON_XPUB: HDKey.fromMasterSeed(seed).derive("m/44'/195'/0'").publicExtendedKey,
    ETHEREUM_WITHDRAWAL_FEE: '0',
    ETHEREUM_MIN_WITHDRAWAL: '1',
    ETHEREUM_CONFIRMATIONS: '1',
    ETHEREUM_POLL_SECONDS: '1',
    LOG_LEVEL: 'silent',
    RATE_LIMIT: '1000000/1',
    ...(chainUrl ? { ETHEREUM_RPC_URL: chainUrl, ETHEREUM_TOKEN_CONTRACT: token! } : {}),
    ...(keyFile ? { ETHEREUM_PAYOUT_KEY_FILE: keyFile } : {}),
  };
  const merchant = JSON.parse((await runCommand(['merchants', 'create', '--name', name, '--json'], env)).stdout) as { apiKey: string; apiSecret: string };
  await runCommand(['merchants', 'set-withdrawals', '--api-key', merchant.apiKey, '--enabled'], env);
  return { platform: await startPartnerApi(env), merchant };
}

buildWhatChanged();
const chain = await startChain({ blockTime: 1 });
const dir = mkdtempSync(join(tmpdir(), 'partner-bench-payouts-'));
const running: RunningPartnerApi[] = [];
try {
  const token = await chain.deployToken();
  const keyHex = randomBytes(32).toString('hex');
  const wallet = new HotWallet('Ethereum', Buffer.from(keyHex, 'hex'));
  const keyFile = join(dir, 'payout.key');
  writeFileSync(keyFile, keyHex, { mode: 0o600 });
  await chain.setBalance(wallet.address, 10n ** 21n);
  await token.distribute([wallet.address, chain.accounts[1]!], 100_000_000_000n);

  // Idle, nothing to pay, side by side: the same platform scanning the same chain with a hot wallet
  // (its payout job pays) and without one (the job only follows the operator's recorded payments), and
  // one without a chain (no scanner, no payout job). Each reaches the node through a proxy of its own.
  const proxies = [await startFaultProxy(chain.rpcUrl), await startFaultProxy(chain.rpcUrl)];
  const withWallet = await platformOn(proxies[0]!.url, token.address, keyFile, dir, 'idle-with-wallet');
  const withoutWallet = await platformOn(proxies[1]!.url, token.address, undefined, dir, 'idle-without-wallet');
  const withoutChain = await platformOn(undefined, undefined, undefined, dir, 'idle-without-chain');
  running.push(withWallet.platform, withoutWallet.platform, withoutChain.platform);
  await new Promise((resolve) => setTimeout(resolve, 3000)); // past the start
  const pids = [withWallet, withoutWallet, withoutChain].map((p) => p.platform.process.process.pid!);
  const callsBefore = proxies.map((p) => p.calls.length);
  const before = pids.map(cpuSeconds);
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const idle = pids.map((pid, i) => ((cpuSeconds(pid) - before[i]!) * 1000 * 60) / IDLE_SECONDS); // CPU ms a minute
  const idleCalls = proxies.map((p, i) => (p.calls.length - callsBefore[i]!) / IDLE_SECONDS); // node calls a second
  await Promise.all(running.splice(0).map((p) => p.stop()));
  await Promise.all(proxies.map((p) => p.close()));

  // Throughput: PAYOUTS withdrawals created at once; the time until the last is DONE.
  const { platform, merchant } = await platformOn(chain.rpcUrl, token.address, keyFile, dir, 'throughput');
  running.push(platform);
  const client = createPartnerClient({ baseUrl: platform.baseUrl, ...merchant });
  const order = await client.POST('/partner/v1/platforms/orders', { body: orderRequest('bench-funding', { blockchain: 'Ethereum' }) });
  await token.transfer(chain.accounts[1]!, order.data!.address, 50_000_000_000n);
  while ((await client.getBalances()).find((b) => b.blockchain === 'Ethereum')!.available < 50_000_000_000) await new Promise((resolve) => setTimeout(resolve, 200));
  const started = performance.now();
  const uuids = await Promise.all(
    Array.from({ length: PAYOUTS }, async (_, i) => (await client.createWithdrawal({ externalId: `bench-${i}`, blockchain: 'Ethereum', currency: 'USDT', amount: Number((1 + i / 100).toFixed(2)), destinationAddress: `0x${randomBytes(20).toString('hex')}` })).uuid),
  );
  let done = 0;
  while (done < PAYOUTS) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    done = 0;
    for await (const w of client.listWithdrawals({ status: 'DONE', limit: 100 })) if (uuids.includes(w.uuid)) done++;
  }
  const seconds = (performance.now() - started) / 1000;
  const perMinute = (PAYOUTS * 60) / seconds;
  const sent = Number(BigInt(await chain.rpc<string>('eth_getTransactionCount', [wallet.address, 'latest'])));
  if (sent !== PAYOUTS) throw new Error(`the hot wallet sent ${sent} transactions for ${PAYOUTS} payouts`);

  publishResults(
    'payouts',
    [
      `anvil mining a block a second, one confirmation, the payout job's poll 1 s; a real \`partner-api serve\` process (live mode, PGlite, logs off).`,
      '',
      '| payouts | from the creates to the last DONE | payouts a minute | transactions the hot wallet sent |\n|---:|---:|---:|---:|',
      `| ${PAYOUTS} | ${seconds.toFixed(1)} s | ${perMinute.toFixed(0)} | ${sent} |`,
      '',
      `| idle, ${IDLE_SECONDS} s, nothing to pay | CPU ms a minute (the process) | / the one without a hot wallet | node calls a second |\n|---|---:|---:|---:|`,
      `| scanning Ethereum, the payout job with a hot wallet | ${idle[0]!.toFixed(0)} | ${(idle[0]! / idle[1]!).toFixed(2)} | ${idleCalls[0]!.toFixed(2)} |`,
      `| scanning Ethereum, the payout job without one (following recorded payments) | ${idle[1]!.toFixed(0)} | 1.00 | ${idleCalls[1]!.toFixed(2)} |`,
      `| no chain (no scanner, no payout job) | ${idle[2]!.toFixed(0)} | ${(idle[2]! / idle[1]!).toFixed(2)} | 0 |`,
    ].join('\n'),
    { payouts: PAYOUTS, seconds, perMinute, sent, idleCpuMsPerMinute: { withWallet: idle[0], withoutWallet: idle[1], withoutChain: idle[2] }, idleCallsPerSecond: { withWallet: idleCalls[0], withoutWallet: idleCalls[1] } },
  );
} finally {
  await Promise.all(running.map((p) => p.stop()));
  await chain.stop();
  rmSync(dir, { recursive: true, force: true });
}
