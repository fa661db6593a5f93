// The operator's money-out commands (issue 46): withdrawals create (through the same ledger checks as
// the API), set-status, approve and reject, merchants set-withdrawals, ledger check and callbacks list of
// a withdrawal's events: their output, exit codes and what they change.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../../src/server/config.js';
import { openPlatform, type Platform } from '../../../src/server/platform.js';
import { sandboxDeposit } from '../../../src/server/orders/sandbox-deposits.js';
import type { Network } from '../../../src/server/shared/network.js';
import { orderRequest, SAMPLE_ETHEREUM_DESTINATION, SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { runCommand as cli } from '../../support/cli.js';
import { copiedDataDirectory } from '../../support/database-templates.js';
import { hdVectors } from '../../fixtures/vectors.js';

const TX = `0x${'5c'.repeat(32)}`;
let dataDir: string;
let env: Record<string, string>;
let apiKey: string;

/** Opens the platform on the commands' data directory between two commands (they close it after each). */
async function withPlatform<T>(work: (platform: Platform) => Promise<T>, settings: Record<string, string> = env): Promise<T> {
  const platform = await openPlatform(readConfig({ ...settings, LOG_LEVEL: 'silent' }), { logger: false });
  try {
    return await work(platform);
  } finally {
    await platform.close();
  }
}

/** Credits the merchant's balance with a sandbox deposit to a new order of its own. */
function fund(network: Network, amount: bigint, settings = env, key = apiKey) {
  return withPlatform(async (platform) => {
    const merchant = (await platform.merchants.byApiKey(key))!;
    const created = await platform.orders.create(merchant.id, orderRequest(`fund-${network}-${amount}`, { blockchain: network }));
    if (created.outcome !== 'created') throw new Error(created.outcome);
    await sandboxDeposit(platform.db, { merchantId: merchant.id, orderUuid: created.order.uuid, amount, seed: 'cli', now: new Date(), watchWindowSeconds: 60 });
  }, settings);
}

const create = (externalId: string, amount: string, network = 'Ethereum', address = SAMPLE_ETHEREUM_DESTINATION) =>
  cli(['withdrawals', 'create', '--api-key', apiKey, '--external-id', externalId, '--amount', amount, '--blockchain', network, '--destination-address', address, '--json'], env);

beforeAll(async () => {
  dataDir = copiedDataDirectory('partner-cli-withdrawals-');
  env = { DATA_DIR: dataDir };
  apiKey = (JSON.parse((await cli(['merchants', 'create', '--name', 'W', '--json'], env)).stdout) as { apiKey: string }).apiKey;
});
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

// Each command opens the embedded database (seconds of CPU on a busy machine): room for a dozen.
describe('partner-api withdrawals', { timeout: 240_000 }, () => {
  it('create draws on the balance as the API does, and set-status settles it once', async () => {
    const refused = await create('wd-1', '10');
    expect(refused).toEqual({ code: 1, stdout: '', stderr: 'partner-api: the withdrawal was refused: it needs 15 USDT (fee 5 included), the balance has 0 available\n' });
    await fund('Ethereum', 20_000_000n);
    const created = await create('wd-1', '10');
    expect(created.code).toBe(0);
    const withdrawal = JSON.parse(created.stdout) as { uuid: string };
    expect(withdrawal).toMatchObject({ amount: 10, fee: 5, status: 'PENDING', stage: 'queued' });
    const text = await cli(['withdrawals', 'create', '--api-key', apiKey, '--external-id', 'wd-2', '--amount', '0.1', '--blockchain', 'Tron', '--destination-address', SAMPLE_TRON_DESTINATION], env);
    expect(text.stderr).toBe('partner-api: the withdrawal was refused: amount is under the Tron minimum withdrawal of 1 USDT\n');

    const done = await cli(['withdrawals', 'set-status', '--uuid', withdrawal.uuid, '--status', 'DONE', '--tx-id', TX], env);
    expect(done).toEqual({ code: 0, stdout: `withdrawal ${withdrawal.uuid} is DONE: its hold is spent, its txId ${TX}\n`, stderr: '' });
    const again = await cli(['withdrawals', 'set-status', '--uuid', withdrawal.uuid, '--status', 'FAILED'], env);
    expect(again).toEqual({ code: 1, stdout: '', stderr: `partner-api: withdrawal ${withdrawal.uuid} cannot be moved to FAILED: it is DONE, which is final\n` });
    const pending = await cli(['withdrawals', 'set-status', '--uuid', withdrawal.uuid, '--status', 'PENDING'], env);
    expect(pending.code).toBe(64);
    expect(pending.stderr).toMatch(/every withdrawal starts PENDING and never goes back to it; give DONE or FAILED/);
    expect((await create('wd-1', '12')).stderr).toBe('partner-api: merchant W already has a withdrawal with external id wd-1\n');
    // Read as decimal text, never a double (issue 53): 1.9999999999999999 is not 2; plain decimals only.
    for (const amount of ['1.0000001', '1.9999999999999999', '1e1', '0']) {
      expect((await create('wd-3', amount)).stderr, amount).toMatch(/--amount must be a positive decimal of whole USDT up to 1000000000 with at most 6 decimals/);
    }
    for (const [flags, message] of [
      [['--tx-id', 'nope'], /--tx-id goes with --status DONE/],
      [['--status', 'DONE', '--reason', 'x'], /--reason goes with --status FAILED/],
    ] as const) {
      const misuse = await cli(['withdrawals', 'set-status', '--uuid', withdrawal.uuid, '--status', 'DONE', ...flags], env);
      expect(misuse.code).toBe(64);
      expect(misuse.stderr).toMatch(message);
    }
    const balances = await withPlatform(async (platform) => {
      const merchant = (await platform.merchants.byApiKey(apiKey))!;
      return (await platform.db.query<{ available: bigint; withdrawn: bigint }>("SELECT available, withdrawn FROM balances WHERE merchant_id = $1 AND blockchain = 'Ethereum'", [merchant.id]))[0];
    });
    expect(balances).toEqual({ available: 5_000_000n, withdrawn: 15_000_000n });
  });

  it('approve moves one awaiting approval on; reject fails one and gives its hold back', async () => {
    await fund('Tron', 100_000_000n);
    const [large, other] = await withPlatform(async (platform) => {
      const merchant = (await platform.merchants.byApiKey(apiKey))!;
      await platform.db.query('INSERT INTO withdrawal_policies (merchant_id, enabled, approve_above) VALUES ($1, true, 5000000)', [merchant.id]);
      const ask = (externalId: string, amountUnits: bigint) =>
        platform.withdrawals.request({ merchantId: merchant.id, externalId, network: 'Tron', currency: 'USDT', amountUnits, destinationAddress: SAMPLE_TRON_DESTINATION, callbackUrl: undefined, source: 'api' });
      return [await ask('api-large', 20_000_000n), await ask('api-other', 30_000_000n)].map((r) => (r.outcome === 'created' ? r.row.uuid : ''));
    });
    const approved = await cli(['withdrawals', 'approve', '--uuid', large!], env);
    expect(approved).toEqual({ code: 0, stdout: `withdrawal ${large} is approved: PENDING, queued\n`, stderr: '' });
    expect((await cli(['withdrawals', 'approve', '--uuid', large!], env)).stderr).toBe(`partner-api: withdrawal ${large} cannot be approved: it is queued, not awaiting approval\n`);
    const rejected = await cli(['withdrawals', 'reject', '--uuid', other!, '--reason', 'Destination not verified.', '--json'], env);
    expect(JSON.parse(rejected.stdout)).toMatchObject({ uuid: other, status: 'FAILED', failureReason: 'Destination not verified.' });
    expect((await cli(['withdrawals', 'reject', '--uuid', '6f1c0000-0000-4000-8000-000000000000'], env)).stderr).toBe('partner-api: no withdrawal 6f1c0000-0000-4000-8000-000000000000\n');

    // Each change is an event of the withdrawal, listed by the operator with it.
    const listed = await cli(['callbacks', 'list', '--withdrawal', large!], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(new RegExp(`withdrawal\\.updated\\s+none\\s+0 attempt\\(s\\), last not attempted  withdrawal ${large}  → \\(no callbackUrl: in the feed only\\)`));
    const check = await cli(['ledger', 'check'], env);
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(/^\d+ entries, 2 balances: the books agree\n$/);
  });
});

describe('partner-api withdrawals pending and record-tx, and DONE in live mode', { timeout: 240_000 }, () => {
  it('lists what to pay as CSV or JSON, oldest first', async () => {
    const csv = await cli(['withdrawals', 'pending', '--blockchain', 'Tron'], env);
    expect(csv.code).toBe(0);
    const [header, ...rows] = csv.stdout.trim().split('\r\n');
    // The columns it always had, in their order, then what awaits a person and why.
    expect(header).toBe('uuid,network,destinationAddress,amount,merchantId,externalId,createdAt,waitingForFundsSince,stage,awaits,claimedAt,sentAt,txId');
    expect(rows.every((row) => row.split(',')[1] === 'Tron')).toBe(true);
    const all = JSON.parse((await cli(['withdrawals', 'pending', '--json'], env)).stdout) as { network: string; amount: string; stage?: string }[];
    expect(all.filter((w) => w.network === 'Tron')).toHaveLength(rows.length);
    expect(rows.length).toBeGreaterThan(0); // the approved one, queued
    expect(all.every((w) => /^\d+(\.\d+)?$/.test(w.amount))).toBe(true);
  });

  it('refuses to record a payment where nothing checks the chain, or one that is not a transaction id', async () => {
    await fund('Ethereum', 15_000_000n);
    const created = JSON.parse((await create('to-record', '10')).stdout) as { uuid: string };
    const noChain = await cli(['withdrawals', 'record-tx', '--uuid', created.uuid, '--tx-id', TX], env);
    expect(noChain).toEqual({ code: 1, stdout: '', stderr: "partner-api: nothing checks Ethereum's chain here (ETHEREUM_RPC_URL is not set): set it, or use withdrawals set-status --status DONE --without-proof\n" });
    const malformed = await cli(['withdrawals', 'record-tx', '--uuid', created.uuid, '--tx-id', 'ab'.repeat(32)], env);
    expect(malformed.code).toBe(64);
    expect(malformed.stderr).toMatch(/--tx-id "a[ab]+" is no Ethereum transaction id \(0x \+ 64 hex\)/);
  });

  it('takes DONE in live mode only --without-proof, recorded and listed by ledger check', async () => {
    const live = {
      PARTNER_API_MODE: 'live', DATA_DIR: copiedDataDirectory('partner-cli-live-'), SECRET_KEY: randomBytes(32).toString('base64'), PUBLIC_URL: 'https://pay.partner.example',
      TRON_XPUB: hdVectors.wallets[1]!.Tron.xpub, ETHEREUM_XPUB: hdVectors.wallets[1]!.Ethereum.xpub,
    };
    try {
      const liveKey = (JSON.parse((await cli(['merchants', 'create', '--name', 'L', '--json'], live)).stdout) as { apiKey: string }).apiKey;
      await fund('Tron', 50_000_000n, live, liveKey);
      const made = await cli(['withdrawals', 'create', '--api-key', liveKey, '--external-id', 'live-1', '--amount', '10', '--blockchain', 'Tron', '--destination-address', SAMPLE_TRON_DESTINATION, '--json'], live);
      const { uuid } = JSON.parse(made.stdout) as { uuid: string };
      const refused = await cli(['withdrawals', 'set-status', '--uuid', uuid, '--status', 'DONE', '--tx-id', 'ab'.repeat(32)], live);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/in live mode a withdrawal is DONE once the chain confirms its payment: record the payment with partner-api withdrawals record-tx/);
      // The operator's word names the transaction that paid it: the merchant reads DONE with its txId.
      const unnamed = await cli(['withdrawals', 'set-status', '--uuid', uuid, '--status', 'DONE', '--without-proof'], live);
      expect(unnamed.code).toBe(64);
      expect(unnamed.stderr).toMatch(/--without-proof needs --tx-id HASH: a DONE withdrawal names the transaction that paid it/);
      const wrongNetwork = await cli(['withdrawals', 'set-status', '--uuid', uuid, '--status', 'DONE', '--without-proof', '--tx-id', `0x${'ab'.repeat(32)}`], live);
      expect(wrongNetwork).toMatchObject({ code: 1, stderr: expect.stringMatching(/cannot be moved to DONE: DONE carries the transaction that paid it, and "0x(ab)+" is no Tron transaction id \(64 hex, no 0x\)/) });
      // Paid by hand: claimed first, else a hot wallet may pay it meanwhile (the state machine's rule, for every caller).
      const unclaimed = await cli(['withdrawals', 'set-status', '--uuid', uuid, '--status', 'DONE', '--without-proof', '--tx-id', 'ab'.repeat(32)], live);
      expect(unclaimed).toMatchObject({ code: 1, stderr: expect.stringMatching(/a hot wallet may pay it meanwhile: claim it for hand payment first \(partner-api withdrawals claim\)/) });
      expect((await cli(['withdrawals', 'claim', '--uuid', uuid], live)).code).toBe(0);
      // Claimed, its hold is never released: not even by the operator's FAILED (it may be paid by hand already).
      const failed = await cli(['withdrawals', 'set-status', '--uuid', uuid, '--status', 'FAILED'], live);
      expect(failed).toMatchObject({ code: 1, stderr: expect.stringMatching(/it is claimed for hand payment, and may be paid by hand already: unclaim it first/) });
      const done = await cli(['withdrawals', 'set-status', '--uuid', uuid, '--status', 'DONE', '--without-proof', '--tx-id', 'AB'.repeat(32), '--json'], live);
      expect(done.code).toBe(0);
      expect(JSON.parse(done.stdout)).toMatchObject({ uuid, status: 'DONE', txId: 'ab'.repeat(32) });
      const check = await cli(['ledger', 'check'], live);
      expect(check.stdout).toContain(`1 withdrawal(s) DONE on the operator's word, no chain's proof: ${uuid}`);
    } finally {
      rmSync(live.DATA_DIR, { recursive: true, force: true });
    }
  });
});

describe('partner-api merchants set-withdrawals', () => {
  it('sets and shows the policy, a flag at a time', async () => {
    const set = await cli(['merchants', 'set-withdrawals', '--api-key', apiKey, '--enabled', '--max-amount', '500', '--daily-limit', '2000.5', '--allow-address', SAMPLE_TRON_DESTINATION, '--allow-address', SAMPLE_ETHEREUM_DESTINATION.toLowerCase()], env);
    expect(set).toEqual({
      code: 0,
      stdout: [
        'withdrawals through the API: enabled',
        'largest withdrawal: 500 USDT per withdrawal, on Tron and on Ethereum alike',
        "daily limit: 2000.5 USDT in any 24 hours, the merchant's withdrawals on Tron and Ethereum together (PENDING and DONE)",
        'approval above: 5 USDT per withdrawal through the API, on Tron and on Ethereum alike',
        `destinations: only ${SAMPLE_TRON_DESTINATION}, ${SAMPLE_ETHEREUM_DESTINATION} (each on its own network)`,
        "the limits and destinations hold for the operator's withdrawals create too (--override-policy --reason passes them over)",
        '',
      ].join('\n'),
      stderr: '',
    });
    const changed = await cli(['merchants', 'set-withdrawals', '--api-key', apiKey, '--max-amount', 'none', '--allow-address', 'any', '--json'], env);
    expect(JSON.parse(changed.stdout)).toEqual({ enabled: true, maxAmount: null, dailyLimit: '2000.5', approveAbove: '5', allowedAddresses: [] });
    const disabled = await cli(['merchants', 'set-withdrawals', '--api-key', apiKey, '--disabled'], env);
    expect(disabled.stdout.split('\n').slice(0, 2)).toEqual(['withdrawals through the API: disabled (refused in live mode; this sandbox takes them, within the limits below)', 'largest withdrawal: no limit']);
    expect(disabled.stdout).toContain('\ndestinations: any, on either network\n');
  });

  it.each([
    [[], /give at least one of --enabled/],
    [['--enabled', '--disabled'], /give --enabled or --disabled, not both/],
    [['--max-amount', '0'], /--max-amount must be a positive decimal/],
    [['--allow-address', '0x0000000000000000000000000000000000000000'], /--allow-address 0x0000000000000000000000000000000000000000 is the zero address/],
    [['--allow-address', 'any', '--allow-address', SAMPLE_TRON_DESTINATION], /--allow-address any allows every destination: give it alone/],
  ])('refuses %j, exit 64', async (flags, message) => {
    const { code, stderr } = await cli(['merchants', 'set-withdrawals', '--api-key', apiKey, ...flags], env);
    expect(code).toBe(64);
    expect(stderr).toMatch(message);
  });

  it('names an unknown API key', async () => {
    expect(await cli(['merchants', 'set-withdrawals', '--api-key', 'pk_test_none', '--enabled'], env)).toEqual({ code: 1, stdout: '', stderr: 'partner-api: no merchant has the API key pk_test_none\n' });
  });
});

describe('partner-api ledger check', () => {
  it('exits 1 and names a withdrawal whose payout is out with no transaction that may still be mined', async () => {
    await fund('Ethereum', 16_000_000n);
    const made = await create('stuck', '10');
    expect(made.stderr).toBe('');
    const { uuid } = JSON.parse(made.stdout) as { uuid: string };
    // What a crash between two writes used to leave: the withdrawal sent, its only transaction marked dropped.
    const stuck = (state: string, stage: string) =>
      withPlatform(async (platform) => {
        await platform.db.query(`UPDATE withdrawals SET stage = $2 WHERE uuid = $1`, [uuid, stage]);
        await platform.db.query(
          `INSERT INTO payout_transactions (withdrawal_uuid, network, payer, tx_hash, state) VALUES ($1, 'Ethereum', 'operator', $2, $3)
           ON CONFLICT (tx_hash) DO UPDATE SET state = EXCLUDED.state`,
          [uuid, `0x${'7d'.repeat(32)}`, state],
        );
      });
    await stuck('dropped', 'sent');
    const check = await cli(['ledger', 'check'], env);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`1 withdrawal(s) sent with no transaction that may still be mined, for the operator: ${uuid}`);
    expect(check.stderr).toBe('partner-api: 1 withdrawal(s) out with no live transaction\n');
    await stuck('pending', 'sent'); // followed again: nothing to report
    expect(await cli(['ledger', 'check'], env)).toMatchObject({ code: 0 });
  });

  it('exits 1 and names the difference when a balance no longer matches its entries', async () => {
    await withPlatform((platform) => platform.db.query("UPDATE balances SET received = received + 1, available = available + 1 WHERE blockchain = 'Tron'"));
    const check = await cli(['ledger', 'check', '--json'], env);
    expect(check.code).toBe(1);
    expect(JSON.parse(check.stdout).problems).toEqual([expect.stringMatching(/Tron USDT: the entries sum to received\/available\/held\/withdrawn\/owed 100000000 /)]);
    expect(check.stderr).toBe('partner-api: the books disagree in 1 place(s)\n');
  });
});
