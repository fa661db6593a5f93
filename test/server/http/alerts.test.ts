// Issue 54 item 4: the alert rules of docs/operating.md ("Alerts"), loaded from the page itself, checked by
// the real Prometheus tool (promtool, scripts/system-deps.sh) against the samples a live platform's /metrics
// really showed. On anvil: a healthy platform's scrape (its hot wallet above its thresholds, nothing waiting,
// failed or paused), then the same platform with its hot wallet drained below both thresholds, a payout
// out (mining stopped), one waiting for funds, one failed (its wait past PAYOUT_FUNDS_WAIT_HOURS), the
// network paused. Hours do not pass in a test: the two waits are moved back in the database, as time
// would have moved them. Each sample becomes a series of a promtool rule unit test: the healthy value for
// an hour, then the value scraped; each alert must fire past its `for:`, and none on the healthy values.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { payoutsPauseCommand } from '../../../src/server/cli/payout-commands.js';
import { HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { startChain, type Chain, type Token } from '../../support/chain.js';
import { liveEthereumEnv } from '../../support/live-env.js';
import { livePlatform, type TestPlatform } from '../../support/platform.js';
import { randomDestination } from '../../support/payouts.js';
import { until } from '../../support/processes.js';

const run = promisify(execFile);
const USDT = 1_000_000n;
const ETH = 10n ** 18n;
const OPERATING = new URL('../../../docs/operating.md', import.meta.url);

interface Rule {
  alert: string;
  expr: string;
  for?: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

/** The ```yaml block of operating.md's section "Alerts": the rule file an operator copies. */
function rulesText(): string {
  const page = readFileSync(OPERATING, 'utf8');
  const section = page.slice(page.indexOf('\n## Alerts\n'));
  const block = /```yaml\n([\s\S]*?)```/.exec(section.slice(0, section.indexOf('\n## ', 1)));
  if (!block) throw new Error('docs/operating.md has no ```yaml block in its section Alerts');
  return block[1]!;
}

/**
 * The rules' fields the unit tests need (what fires, past which `for:`, with which labels and
 * annotations), read line by line from the page's block in the one shape it uses; any other line is
 * refused, so a rule written otherwise fails here rather than being half read. promtool checks the rest.
 */
function parseRules(text: string): Rule[] {
  const rules: Rule[] = [];
  let map: 'labels' | 'annotations' | undefined;
  for (const line of text.split('\n')) {
    if (/^(groups:|  - name: .+|    rules:|\s*)$/.test(line)) continue;
    const field = /^ {6}(- | {2})(alert|expr|for|labels|annotations):(?: (.*))?$/.exec(line);
    const entry = /^ {10}([a-z_]+): (.*)$/.exec(line);
    if (field?.[1] === '- ') rules.push({ alert: '', expr: '', labels: {}, annotations: {} });
    const rule = rules.at(-1);
    if (field && rule) {
      const [, , key, value] = field;
      if (key === 'labels' || key === 'annotations') map = key;
      else (rule as unknown as Record<string, string>)[key!] = value!;
    } else if (entry && rule && map) rule[map][entry[1]!] = JSON.parse(entry[2]!.startsWith('"') ? entry[2]! : JSON.stringify(entry[2]!)) as string;
    else throw new Error(`a line of the rules this test does not read: ${JSON.stringify(line)}`);
  }
  return rules;
}

/** A Prometheus duration of the rules (10m, 2h) in minutes. */
function minutes(duration: string | undefined): number {
  if (duration === undefined) return 0;
  const match = /^(\d+)([mh])$/.exec(duration);
  if (!match) throw new Error(`a duration this test does not read: ${duration}`);
  return Number(match[1]) * (match[2] === 'h' ? 60 : 1);
}

/** The platform's own samples of a /metrics scrape: series (as PromQL writes it) → value. */
function samples(text: string): Map<string, string> {
  const found = new Map<string, string>();
  for (const line of text.split('\n')) {
    const match = /^(partner_[a-z_]+(?:\{.*\})?) (\S+)$/.exec(line);
    if (match) found.set(match[1]!, match[2]!);
  }
  return found;
}

/** Minutes of the before values; the scraped ones follow, for long enough for every `for:`. */
const SWITCH = 60;
const AFTER = 300;

/**
 * A promtool rule unit test: each series at its `before` value for an hour, then at its `after` value
 * (`_`: absent); each rule evaluated past its `for:` after the switch, and expected to fire (on
 * `network`, with its labels and its annotations as written) or not.
 */
function unitTest(rules: Rule[], before: Map<string, string>, after: Map<string, string>, firing: (rule: Rule) => string[]): string {
  const series = [...new Set([...before.keys(), ...after.keys()])].map((name) => ({ series: name, values: `${before.get(name) ?? '_'}x${SWITCH - 1} ${after.get(name) ?? '_'}x${AFTER}` }));
  const alert_rule_test = rules.map((rule) => ({
    eval_time: `${SWITCH + minutes(rule.for) + 5}m`,
    alertname: rule.alert,
    exp_alerts: firing(rule).map((network) => ({
      exp_labels: { network, ...rule.labels },
      exp_annotations: Object.fromEntries(Object.entries(rule.annotations).map(([k, v]) => [k, v.replaceAll('{{ $labels.network }}', network)])),
    })),
  }));
  // YAML reads JSON.
  return JSON.stringify({ rule_files: ['rules.yml'], evaluation_interval: '1m', tests: [{ interval: '1m', input_series: series, alert_rule_test }] }, null, 1);
}

describe('the alert rules of docs/operating.md, against a live platform on anvil (promtool)', () => {
  let chain: Chain;
  let token: Token;
  let dir: string;
  let t: TestPlatform;
  let wallet: string;
  const rules = parseRules(rulesText());

  beforeAll(async () => {
    chain = await startChain();
    token = await chain.deployToken();
    dir = mkdtempSync(join(tmpdir(), 'alerts-'));
    writeFileSync(join(dir, 'rules.yml'), rulesText());
    const keyHex = randomBytes(32).toString('hex');
    const keyFile = join(dir, 'ethereum-payout.key');
    writeFileSync(keyFile, `${keyHex}\n`, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    wallet = new HotWallet('Ethereum', Buffer.from(keyHex, 'hex')).address;
    await chain.setBalance(wallet, 10n * ETH);
    await token.distribute([wallet], 1000n * USDT);
    t = await livePlatform('pglite', {
      ...liveEthereumEnv({ rpcUrl: chain.rpcUrl, token: token.address, confirmations: 2, startBlock: await chain.blockNumber() }),
      ETHEREUM_PAYOUT_KEY_FILE: keyFile,
      ETHEREUM_WITHDRAWAL_FEE: '0',
      ETHEREUM_MIN_WITHDRAWAL: '1',
      // Never replaced: the payout out stays the one transaction it was signed as.
      PAYOUT_REPLACE_AFTER_SECONDS: '86400',
      ETHEREUM_LOW_BALANCE_USDT: String(500n * USDT),
      ETHEREUM_LOW_BALANCE_ETH: String(5n * ETH),
    });
    await t.fund('Ethereum', 1000n * USDT);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await chain?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const scrape = async () => (await fetch(`${t.baseUrl}/metrics`)).text();
  const sample = async (series: string) => samples(await scrape()).get(series);
  const stage = async (uuid: string) => (await t.db.query<{ status: string; stage: string | null; waits: boolean }>('SELECT status, stage, funds_awaited_since IS NOT NULL AS waits FROM withdrawals WHERE uuid = $1', [uuid]))[0]!;
  const withdraw = async (units: bigint) =>
    (await t.client().createWithdrawal({ externalId: `alerts-${randomBytes(4).toString('hex')}`, blockchain: 'Ethereum', currency: 'USDT', amount: Number(units) / 1e6, destinationAddress: randomDestination() })).uuid;
  /** promtool's verdict on a unit test of the rules: its exit code and what it said. */
  const promtool = async (test: string) => {
    writeFileSync(join(dir, 'test.yml'), test);
    return run('promtool', ['test', 'rules', 'test.yml'], { cwd: dir }).then(
      ({ stdout }) => ({ code: 0, out: stdout }),
      (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, out: error.stdout + error.stderr }),
    );
  };

  it('promtool checks the rules as written, and reads six alerts from them', async () => {
    const { stdout } = await run('promtool', ['check', 'rules', join(dir, 'rules.yml')]);
    expect(stdout).toContain('SUCCESS: 6 rules found');
    expect(rules.map((r) => r.alert).sort()).toEqual(['PayoutHotWalletFeeCoinLow', 'PayoutHotWalletTokenLow', 'PayoutInFlightTooLong', 'PayoutsFailing', 'PayoutsPausedLong', 'PayoutsWaitingForFunds']);
  });

  it('each alert fires on the drained, paused platform past its for:, none on the healthy one', async () => {
    await t.platform.startJobs();
    // Healthy: the payer has read the hot wallet's balances, above both thresholds.
    await until('the hot wallet balance in /metrics', async () => ((await sample('partner_payout_hot_wallet_balance{network="Ethereum",asset="token"}')) === String(1000n * USDT) ? true : undefined), 30_000);
    const healthy = samples(await scrape());
    expect(healthy.get('partner_payout_hot_wallet_low_balance_threshold{network="Ethereum",asset="token"}')).toBe(String(500n * USDT));
    expect(healthy.get('partner_payout_hot_wallet_low_balance_threshold{network="Ethereum",asset="gas"}')).toBe(String(5n * ETH));
    expect(healthy.get('partner_payouts_failed_total{network="Ethereum"}')).toBe('0');
    expect(healthy.get('partner_payouts_paused{network="Ethereum"}')).toBe('0');

    // Drained on the chain: 900 of its 1,000 USDT sent away by the hot wallet, its ether down to 1.
    await chain.rpc('anvil_impersonateAccount', [wallet.toLowerCase()]);
    await token.transfer(wallet.toLowerCase(), randomDestination(), 900n * USDT);
    await chain.rpc('anvil_stopImpersonatingAccount', [wallet.toLowerCase()]);
    await chain.setBalance(wallet, ETH);
    // Mining stops: the first payout stays out.
    await chain.setAutomine(false);
    const out = await withdraw(95n * USDT);
    await until('the first payout sent', async () => ((await stage(out)).stage === 'sent' ? true : undefined), 30_000);
    // 5 USDT left beyond it: the next two wait for funds.
    const failing = await withdraw(50n * USDT);
    const waiting = await withdraw(40n * USDT);
    await until('two payouts waiting for funds', async () => ((await stage(failing)).waits && (await stage(waiting)).waits ? true : undefined), 30_000);
    // One has waited past PAYOUT_FUNDS_WAIT_HOURS (72): it fails at the payer's next round.
    await t.db.query("UPDATE withdrawals SET funds_awaited_since = now() - interval '100 hours' WHERE uuid = $1", [failing]);
    await until('the payout failed', async () => ((await stage(failing)).status === 'FAILED' ? true : undefined), 30_000);
    await payoutsPauseCommand(t.platform, { blockchain: 'ethereum', reason: 'alerts test' });
    // The payout out was signed two hours ago.
    await t.db.query("UPDATE payout_transactions SET created_at = now() - interval '2 hours' WHERE withdrawal_uuid = $1", [out]);
    await until('the drained balance in /metrics', async () => ((await sample('partner_payout_hot_wallet_balance{network="Ethereum",asset="gas"}')) === String(ETH) ? true : undefined), 30_000);
    const drained = samples(await scrape());
    expect(drained.get('partner_payout_hot_wallet_balance{network="Ethereum",asset="token"}')).toBe(String(100n * USDT));
    expect(drained.get('partner_payouts{network="Ethereum",state="waiting_for_funds"}')).toBe('1');
    expect(drained.get('partner_payouts_failed_total{network="Ethereum"}')).toBe('1');
    expect(Number(drained.get('partner_payout_oldest_in_flight_seconds{network="Ethereum"}'))).toBeGreaterThan(7000);
    expect(drained.get('partner_payouts_paused{network="Ethereum"}')).toBe('1');
    // Paused and waiting: still ready, and it says so.
    const ready = await fetch(`${t.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', payoutsWaitingForFunds: { Ethereum: 1 }, payoutsPaused: [{ network: 'Ethereum', reason: 'alerts test', since: expect.any(String) }] });

    const fired = await promtool(unitTest(rules, healthy, drained, () => ['Ethereum']));
    expect(fired.out).toContain('SUCCESS');
    expect(fired.code).toBe(0);
    const quiet = await promtool(unitTest(rules, healthy, healthy, () => []));
    expect(quiet.out).toContain('SUCCESS');
    expect(quiet.code).toBe(0);
    // The check can fail: the healthy samples do not make the alerts fire.
    const wrong = await promtool(unitTest(rules, healthy, healthy, () => ['Ethereum']));
    expect(wrong.code).not.toBe(0);
    for (const rule of rules) expect(wrong.out).toContain(`alertname: ${rule.alert}`);
  }, 180_000);
});
