// Issue 54, items 1, 2, 5 and 6, as the operator types them: withdrawals list and pending (what awaits a
// person, in CSV whose first columns are pending's old ones), claim and unclaim, the operator's create
// held to the merchant's policy unless overridden with a reason, set-status DONE in the sandbox with a
// transaction of the network made up. On PGlite, and on PostgreSQL with TEST_DATABASE_URL (the commands open it themselves).
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readConfig } from '../../../src/server/config.js';
import { openPlatform, type Platform } from '../../../src/server/platform.js';
import { sandboxDeposit } from '../../../src/server/orders/sandbox-deposits.js';
import { recordOperatorPayment } from '../../../src/server/payouts/payout-store.js';
import type { Network } from '../../../src/server/shared/network.js';
import { orderRequest, SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { runCommand as cli } from '../../support/cli.js';
import { copiedDataDirectory } from '../../support/database-templates.js';
import { DATABASES, freshDatabase } from '../../support/platform.js';

const OTHER_TRON_DESTINATION = 'TByNqmoBHifuCyU3JU774enPZ59SZrdqko';
let env: Record<string, string>;
let apiKey: string;
let merchantId: string;

async function withPlatform<T>(work: (platform: Platform) => Promise<T>): Promise<T> {
  const platform = await openPlatform(readConfig({ ...env, LOG_LEVEL: 'silent' }), { logger: false });
  try {
    return await work(platform);
  } finally {
    await platform.close();
  }
}

/** Credits the merchant with a sandbox deposit on the network. */
const fund = (network: Network, amount: bigint) =>
  withPlatform(async (platform) => {
    const created = await platform.orders.create(merchantId, orderRequest(`fund-${network}-${amount}`, { blockchain: network }));
    if (created.outcome !== 'created') throw new Error(created.outcome);
    await sandboxDeposit(platform.db, { merchantId, orderUuid: created.order.uuid, amount, seed: 'lists', now: new Date(), watchWindowSeconds: 60 });
  });

/** A withdrawal the merchant asks for through the API (its policy's approval applies). */
const askThroughApi = (externalId: string, amountUnits: bigint) =>
  withPlatform(async (platform) => {
    const result = await platform.withdrawals.request({ merchantId, externalId, network: 'Tron', currency: 'USDT', amountUnits, destinationAddress: SAMPLE_TRON_DESTINATION, callbackUrl: undefined, source: 'api' });
    if (result.outcome !== 'created') throw new Error(result.outcome);
    return result.row.uuid;
  });

const create = (externalId: string, amount: string, address = SAMPLE_TRON_DESTINATION, ...more: string[]) =>
  cli(['withdrawals', 'create', '--api-key', apiKey, '--external-id', externalId, '--amount', amount, '--blockchain', 'Tron', '--destination-address', address, '--json', ...more], env);

/** A CSV's rows as objects by its header. */
function csvRows(stdout: string): Record<string, string>[] {
  const [header, ...lines] = stdout.trimEnd().split('\r\n');
  const names = header!.split(',');
  return lines.map((line) => Object.fromEntries(line.split(',').map((value, i) => [names[i], value])));
}
const pending = async (...flags: string[]) => csvRows((await cli(['withdrawals', 'pending', ...flags], env)).stdout);

describe.each(DATABASES)('on %s', (kind) => {
  let drop: () => Promise<void> = async () => {};
  beforeAll(async () => {
    env = { DATA_DIR: copiedDataDirectory('partner-cli-lists-') };
    if (kind === 'postgres') {
      // The commands open the database itself, as they do beside instances on PostgreSQL (no operator socket).
      const database = await freshDatabase('postgres', undefined, 'migrated');
      await database.db.close();
      drop = database.drop;
      env.DATABASE_URL = database.url!;
    }
    const created = JSON.parse((await cli(['merchants', 'create', '--name', 'Lists', '--json'], env)).stdout) as { apiKey: string; merchantId: string };
    apiKey = created.apiKey;
    merchantId = created.merchantId;
    await fund('Tron', 1_000_000_000n);
  }, 120_000);
  afterAll(async () => {
    rmSync(env.DATA_DIR!, { recursive: true, force: true });
    await drop();
  });

  describe('partner-api withdrawals list and pending', { timeout: 240_000 }, () => {
    it('shows the two that await approval, with what awaits and the uuid approve needs', async () => {
      expect((await cli(['merchants', 'set-withdrawals', '--api-key', apiKey, '--enabled', '--approve-above', '20'], env)).code).toBe(0);
      const first = await askThroughApi('big-1', 30_000_000n);
      const second = await askThroughApi('big-2', 40_000_000n);
      const rows = await pending();
      expect(rows.map((r) => [r.uuid, r.stage, r.awaits, r.amount])).toEqual([
        [first, 'awaiting_approval', 'approval', '30'],
        [second, 'awaiting_approval', 'approval', '40'],
      ]);
      const listed = JSON.parse((await cli(['withdrawals', 'list', '--stage', 'awaiting_approval', '--merchant', merchantId, '--blockchain', 'Tron', '--json'], env)).stdout) as { uuid: string; fee: string; status: string }[];
      expect(listed.map((w) => w.uuid)).toEqual([second, first]); // newest first
      expect(listed[0]).toMatchObject({ status: 'PENDING', fee: '1', policyOverrideReason: null, claimedAt: null });
      expect(csvRows((await cli(['withdrawals', 'list', '--stage', 'awaiting_approval', '--blockchain', 'Ethereum'], env)).stdout)).toEqual([]);
      expect((await cli(['withdrawals', 'approve', '--uuid', first], env)).code).toBe(0);
      expect((await cli(['withdrawals', 'approve', '--uuid', second], env)).code).toBe(0);
    });

    it('refuses a stage it does not know and a merchant id that is none; lists nothing of a merchant no one has', async () => {
      expect(await cli(['withdrawals', 'list', '--stage', 'waiting'], env)).toMatchObject({ code: 64, stderr: expect.stringMatching(/--stage must be one of awaiting_approval, queued, sent/) });
      expect(await cli(['withdrawals', 'list', '--merchant', apiKey], env)).toMatchObject({ code: 64, stderr: expect.stringMatching(/--merchant must be a merchant id/) });
      const nobody = await cli(['withdrawals', 'list', '--merchant', '6f1c0000-0000-4000-8000-000000000000'], env);
      expect(nobody.code).toBe(0);
      expect(csvRows(nobody.stdout)).toEqual([]);
      expect(csvRows((await cli(['withdrawals', 'list', '--merchant', merchantId], env)).stdout)).toHaveLength(2);
    });

    it('claims a queued one for hand payment, shows it so, and gives it back', async () => {
      const { uuid } = JSON.parse((await create('by-hand', '12')).stdout) as { uuid: string };
      expect((await pending()).find((r) => r.uuid === uuid)).toMatchObject({ stage: 'queued', awaits: 'payment', claimedAt: '' });
      const claimed = await cli(['withdrawals', 'claim', '--uuid', uuid], env);
      expect(claimed).toEqual({
        code: 0,
        stdout: `withdrawal ${uuid} is claimed for hand payment: no payer pays it; pay it, then partner-api withdrawals record-tx --uuid ${uuid} --tx-id HASH (or give it back: withdrawals unclaim)\n`,
        stderr: '',
      });
      const row = (await pending()).find((r) => r.uuid === uuid)!;
      expect(row).toMatchObject({ stage: 'queued', awaits: 'hand_payment', claimedAt: expect.stringMatching(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/) });
      const again = JSON.parse((await cli(['withdrawals', 'claim', '--uuid', uuid, '--json'], env)).stdout) as { claimedAt: string };
      expect(again.claimedAt).toBe(row.claimedAt); // claiming again changes nothing
      const listed = JSON.parse((await cli(['withdrawals', 'list', '--stage', 'queued', '--json'], env)).stdout) as { uuid: string; claimedAt: string | null }[];
      expect(listed.find((w) => w.uuid === uuid)!.claimedAt).toBe(row.claimedAt);

      expect(await cli(['withdrawals', 'unclaim', '--uuid', uuid], env)).toEqual({ code: 0, stdout: `withdrawal ${uuid} is given back: the hot wallet pays it, where one pays its network\n`, stderr: '' });
      expect((await pending()).find((r) => r.uuid === uuid)).toMatchObject({ awaits: 'payment', claimedAt: '' });
      expect(await cli(['withdrawals', 'unclaim', '--uuid', uuid], env)).toEqual({ code: 1, stdout: '', stderr: `partner-api: withdrawal ${uuid} cannot be given back: it is not claimed for hand payment\n` });
      expect(await cli(['withdrawals', 'claim', '--uuid', '6f1c0000-0000-4000-8000-000000000000'], env)).toEqual({ code: 1, stdout: '', stderr: 'partner-api: no withdrawal 6f1c0000-0000-4000-8000-000000000000\n' });
    });

    it('shows a payout out longer than the threshold as awaiting confirmation, and not under a longer one', async () => {
      const { uuid } = JSON.parse((await create('out-long', '11')).stdout) as { uuid: string };
      const txId = 'cd'.repeat(32);
      await withPlatform(async (platform) => {
        expect(await recordOperatorPayment(platform.db, { uuid, network: 'Tron' }, txId)).toBe('recorded');
        await platform.db.query("UPDATE payout_transactions SET created_at = now() - interval '2 hours' WHERE withdrawal_uuid = $1", [uuid]);
      });
      // The default: 10 × PAYOUT_REPLACE_AFTER_SECONDS (180 s), 30 minutes.
      expect((await pending()).find((r) => r.uuid === uuid)).toMatchObject({ stage: 'sent', awaits: 'confirmation', txId, sentAt: expect.stringMatching(/^\d{4}-/) });
      expect((await pending('--in-flight-over', '3h')).map((r) => r.uuid)).not.toContain(uuid);
      expect(await cli(['withdrawals', 'claim', '--uuid', uuid], env)).toMatchObject({ code: 1, stderr: expect.stringMatching(/its payout is out \(sent\): that transaction may still be mined, never pay it by hand/) });
    });

    it("keeps pending's old columns first, in their order", async () => {
      const { stdout } = await cli(['withdrawals', 'pending'], env);
      expect(stdout.split('\r\n')[0]).toBe('uuid,network,destinationAddress,amount,merchantId,externalId,createdAt,waitingForFundsSince,stage,awaits,claimedAt,sentAt,txId');
    });
  });

  describe("partner-api withdrawals create and the merchant's policy", { timeout: 240_000 }, () => {
    it('refuses what the policy refuses, and with --override-policy --reason creates it, the reason kept', async () => {
      expect((await cli(['merchants', 'set-withdrawals', '--api-key', apiKey, '--max-amount', '50', '--daily-limit', '180', '--allow-address', SAMPLE_TRON_DESTINATION], env)).code).toBe(0);
      expect(await create('over-max', '70')).toEqual({
        code: 1, stdout: '',
        stderr: "partner-api: the withdrawal was refused by merchant Lists's policy: amount is over your largest withdrawal, 50 USDT (--override-policy --reason TEXT creates it anyway)\n",
      });
      expect(await create('off-list', '5', OTHER_TRON_DESTINATION)).toMatchObject({ code: 1, stderr: expect.stringMatching(/policy: destinationAddress is not one of the destinations the operator allowed/) });
      // Today's withdrawals so far: 30 + 40 (approved) + 12 + 11, 93 of 180; 50 more fit once, not twice.
      expect((await create('daily-1', '50')).code).toBe(0);
      expect(await create('daily-2', '50')).toEqual({
        code: 1, stdout: '',
        stderr: "partner-api: the withdrawal was refused by merchant Lists's policy: over the daily limit of 180 USDT (37 left) (--override-policy --reason TEXT creates it anyway)\n",
      });
      expect(await create('over-max', '70', SAMPLE_TRON_DESTINATION, '--override-policy')).toMatchObject({ code: 64, stderr: expect.stringMatching(/--override-policy needs --reason TEXT/) });
      expect(await create('over-max', '70', SAMPLE_TRON_DESTINATION, '--reason', 'why')).toMatchObject({ code: 64, stderr: expect.stringMatching(/--reason goes with --override-policy/) });

      const overridden = await create('over-max', '70', OTHER_TRON_DESTINATION, '--override-policy', '--reason', 'Agreed by phone with the merchant, ticket 1234.');
      expect(overridden.code).toBe(0);
      const { uuid } = JSON.parse(overridden.stdout) as { uuid: string };
      const [listed] = JSON.parse((await cli(['withdrawals', 'list', '--limit', '1', '--json'], env)).stdout) as Record<string, unknown>[];
      expect(listed).toMatchObject({ uuid, amount: '70', stage: 'queued', policyOverrideReason: 'Agreed by phone with the merchant, ticket 1234.' });
      // The merchant's own read shows nothing of it.
      const read = await withPlatform((platform) => platform.withdrawals.read(merchantId, uuid));
      expect(JSON.stringify(read)).not.toContain('ticket 1234');
    });
  });

  describe('partner-api merchants set-withdrawals --max-amount under the minimums (issue 57)', { timeout: 120_000 }, () => {
    it("refuses one under every network's minimum, and notes the network one closes", async () => {
      // The minimums by default: 1 USDT on Tron, 10 on Ethereum.
      const under = await cli(['merchants', 'set-withdrawals', '--api-key', apiKey, '--max-amount', '0.5'], env);
      expect(under).toEqual({
        code: 64, stdout: '',
        stderr: "partner-api: --max-amount 0.5 is under every network's minimum withdrawal (1 USDT on Tron, 10 USDT on Ethereum): no withdrawal could be made; to refuse them all, say --disabled (see partner-api merchants set-withdrawals --help)\n",
      });
      const tronOnly = await cli(['merchants', 'set-withdrawals', '--api-key', apiKey, '--max-amount', '5'], env);
      expect(tronOnly.code).toBe(0);
      expect(tronOnly.stderr).toBe("partner-api: --max-amount 5 is under Ethereum's minimum withdrawal (10 USDT): no withdrawal can be made on Ethereum\n");
      expect((await cli(['merchants', 'set-withdrawals', '--api-key', apiKey, '--max-amount', 'none'], env)).code).toBe(0);
    });
  });

  describe('partner-api withdrawals set-status DONE in the sandbox', { timeout: 120_000 }, () => {
    it('makes up a transaction of the network when none is named, as the sandbox settles by itself', async () => {
      expect((await cli(['merchants', 'set-withdrawals', '--api-key', apiKey, '--max-amount', 'none', '--daily-limit', 'none', '--allow-address', 'any'], env)).code).toBe(0);
      const { uuid } = JSON.parse((await create('sandbox-done', '3')).stdout) as { uuid: string };
      const done = JSON.parse((await cli(['withdrawals', 'set-status', '--uuid', uuid, '--status', 'DONE', '--json'], env)).stdout) as { status: string; txId: string };
      expect(done).toMatchObject({ status: 'DONE', txId: expect.stringMatching(/^[0-9a-f]{64}$/) });
    });
  });
});
