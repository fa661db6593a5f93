// Issue 54, items 2 and 5, at the level of the withdrawal's state machine and its storage: a withdrawal
// claimed for hand payment is never picked nor written as the hot wallet's intent, the claim and
// the intent never both win (on PostgreSQL, each waits for the other's row lock); a move to DONE always
// carries the transaction that paid it, and in live mode only on the operator's declared word.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database, Sql } from '../../../src/server/db/database.js';
import { recordIntent, recordOperatorPayment, type Intent } from '../../../src/server/payouts/payout-store.js';
import { claimForHand, unclaim } from '../../../src/server/withdrawals/hand-payment.js';
import { awaitFunds, queuedWithdrawals } from '../../../src/server/withdrawals/payout-queue.js';
import { moveWithdrawal, type WithdrawalMove } from '../../../src/server/withdrawals/settlement.js';
import { SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';
import { DATABASES, startTestPlatform, type TestPlatform } from '../../support/platform.js';

const TRON_TX = () => randomBytes(32).toString('hex');

/** The hot wallet's intent for a withdrawal: a signed Tron transaction, as the payer writes it. */
const hotWalletIntent = (withdrawalUuid: string): Intent => ({
  withdrawalUuid, network: 'Tron', payer: 'hot_wallet', fromAddress: 'TJRabPrwbZy45sbavfcjinPJC18kjpRTv8', nonce: null, txHash: TRON_TX(), raw: '{}',
});

describe.each(DATABASES)('a withdrawal paid by hand, and DONE with its transaction, on %s', (kind) => {
  let t: TestPlatform;
  let n = 0;
  beforeAll(async () => {
    t = await startTestPlatform(kind);
    await t.fund('Tron', 1_000_000_000n);
  }, 120_000);
  afterAll(() => t?.close());

  /** A queued Tron withdrawal of 10 USDT, as the operator's create makes it. */
  async function queued(): Promise<string> {
    const result = await t.platform.withdrawals.request({
      merchantId: t.merchant.merchantId, externalId: `hand-${++n}`, network: 'Tron', currency: 'USDT', amountUnits: 10_000_000n,
      destinationAddress: SAMPLE_TRON_DESTINATION, callbackUrl: undefined, source: 'operator',
    });
    if (result.outcome !== 'created') throw new Error(result.outcome);
    return result.row.uuid;
  }
  const claim = (db: Database, uuid: string) => db.transaction((tx) => claimForHand(tx, uuid));
  const intent = (db: Database, uuid: string) => db.transaction((tx) => recordIntent(tx, hotWalletIntent(uuid), 'sent'));
  const stage = async (uuid: string) => (await t.platform.withdrawals.row(uuid))!.stage;
  const transactions = async (uuid: string) => (await t.db.query('SELECT 1 FROM payout_transactions WHERE withdrawal_uuid = $1', [uuid])).length;

  it('takes a claimed withdrawal off the payer: not picked, its intent refused and nothing written, never failed for funds', async () => {
    const uuid = await queued();
    expect(await claim(t.db, uuid)).toMatchObject({ outcome: 'claimed', claimedAt: expect.any(Date) });
    expect((await queuedWithdrawals(t.db, 'Tron', 1000)).map((w) => w.uuid)).not.toContain(uuid);
    expect(await intent(t.db, uuid)).toBeUndefined();
    expect(await transactions(uuid)).toBe(0);
    expect(await awaitFunds(t.db, uuid)).toBe(0);
    const [row] = await t.db.query<{ funds_awaited_since: Date | null }>('SELECT funds_awaited_since FROM withdrawals WHERE uuid = $1', [uuid]);
    expect(row!.funds_awaited_since).toBeNull();
    // The merchant reads it queued, as before: the claim is the operator's.
    expect(await t.platform.withdrawals.read(t.merchant.merchantId, uuid)).toMatchObject({ status: 'PENDING', stage: 'queued' });
  });

  it("refuses to claim one whose payout is out, and the operator's record of an unclaimed one where a claim is required", async () => {
    const paidByWallet = await queued();
    expect(await intent(t.db, paidByWallet)).toMatchObject({ payer: 'hot_wallet' });
    expect(await claim(t.db, paidByWallet)).toEqual({ outcome: 'refused', why: 'its payout is out (sent): that transaction may still be mined, never pay it by hand' });

    const byHand = await queued();
    expect(await recordOperatorPayment(t.db, { uuid: byHand, network: 'Tron' }, TRON_TX(), { claimRequired: true })).toBe('unclaimed');
    expect(await stage(byHand)).toBe('queued');
    await claim(t.db, byHand);
    expect(await recordOperatorPayment(t.db, { uuid: byHand, network: 'Tron' }, TRON_TX(), { claimRequired: true })).toBe('recorded');
    expect(await stage(byHand)).toBe('sent');
    // Given back while its recorded payment is out, the payer could pay it a second time.
    expect(await t.db.transaction((tx) => unclaim(tx, byHand))).toEqual({ outcome: 'refused', why: 'the payment recorded for it is out: the chain decides it first' });
  });

  it('gives a claimed one back to the payer; refuses one that was never claimed or awaits approval', async () => {
    const uuid = await queued();
    expect(await t.db.transaction((tx) => unclaim(tx, uuid))).toEqual({ outcome: 'refused', why: 'it is not claimed for hand payment' });
    await claim(t.db, uuid);
    expect(await t.db.transaction((tx) => unclaim(tx, uuid))).toEqual({ outcome: 'unclaimed' });
    expect((await queuedWithdrawals(t.db, 'Tron', 1000)).map((w) => w.uuid)).toContain(uuid);
    expect(await intent(t.db, uuid)).toMatchObject({ withdrawal_uuid: uuid });
    const waiting = await queued();
    await t.db.query("UPDATE withdrawals SET stage = 'awaiting_approval' WHERE uuid = $1", [waiting]);
    expect(await claim(t.db, waiting)).toEqual({ outcome: 'refused', why: "it awaits the operator's approval: approve it first" });
  });

  it('refuses a move to DONE without its transaction, or with one of another network, and in live mode without the operator\'s declared word', async () => {
    const uuid = await queued();
    const move = (m: WithdrawalMove, mode?: 'sandbox' | 'live') => t.db.transaction((tx) => moveWithdrawal(tx, uuid, m, { mode }));
    expect(await move({ to: 'DONE', txId: undefined })).toMatchObject({ refused: 'DONE carries the transaction that paid it, and none was named' });
    expect(await move({ to: 'DONE', txId: undefined, withoutProof: true }, 'live')).toMatchObject({ refused: 'DONE carries the transaction that paid it, and none was named' });
    expect(await move({ to: 'DONE', txId: `0x${'ab'.repeat(32)}`, withoutProof: true }, 'live')).toMatchObject({
      refused: `DONE carries the transaction that paid it, and "0x${'ab'.repeat(32)}" is no Tron transaction id (64 hex, no 0x)`,
    });
    expect(await move({ to: 'DONE', txId: 'ab'.repeat(32) }, 'live')).toMatchObject({ refused: expect.stringMatching(/^in live mode it is DONE once the chain confirms its payment \(record-tx\)/) });
    expect(await stage(uuid)).toBe('queued');
    // The operator's word alone only for a withdrawal claimed for hand payment: a hot wallet may pay it otherwise.
    expect(await move({ to: 'DONE', txId: 'ab'.repeat(32), withoutProof: true }, 'live')).toMatchObject({ refused: expect.stringMatching(/^a hot wallet may pay it meanwhile: claim it for hand payment first/) });
    expect(await t.db.transaction((tx) => claimForHand(tx, uuid))).toMatchObject({ outcome: 'claimed' });
    // Claimed, never FAILED (it may be paid by hand already), and no transaction of another withdrawal's makes it DONE.
    expect(await move({ to: 'FAILED', reason: 'x' }, 'live')).toMatchObject({ refused: expect.stringMatching(/^it is claimed for hand payment/) });
    const other = await queued();
    expect(await t.db.transaction((tx) => moveWithdrawal(tx, other, { to: 'DONE', txId: 'cd'.repeat(32) }, { mode: 'sandbox' }))).toMatchObject({ status: 'DONE' });
    expect(await move({ to: 'DONE', txId: 'cd'.repeat(32), withoutProof: true }, 'live')).toMatchObject({ refused: `transaction ${'cd'.repeat(32)} pays another withdrawal already` });
    expect(await move({ to: 'DONE', txId: 'ab'.repeat(32), withoutProof: true }, 'live')).toMatchObject({ status: 'DONE', tx_id: 'ab'.repeat(32), settled_without_proof: true });
  });

  it('makes up a transaction of the network for a sandbox DONE that names none, as the sandbox settles by itself', async () => {
    const uuid = await queued();
    const done = await t.platform.withdrawals.move(uuid, { to: 'DONE', txId: undefined });
    expect(done).toMatchObject({ status: 'DONE', txId: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });
});

describe.runIf(DATABASES.includes('postgres'))('a claim and the payer racing on PostgreSQL', () => {
  let t: TestPlatform;
  beforeAll(async () => {
    t = await startTestPlatform('postgres');
    await t.fund('Tron', 1_000_000_000n);
  }, 120_000);
  afterAll(() => t?.close());

  /** Waits, by asking the server (no clock), until a statement of this database waits for a row lock. */
  async function someoneWaitsForALock() {
    for (;;) {
      const [row] = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'");
      if (row!.n > 0) return;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }

  async function queued(externalId: string): Promise<string> {
    const result = await t.platform.withdrawals.request({
      merchantId: t.merchant.merchantId, externalId, network: 'Tron', currency: 'USDT', amountUnits: 10_000_000n,
      destinationAddress: SAMPLE_TRON_DESTINATION, callbackUrl: undefined, source: 'operator',
    });
    if (result.outcome !== 'created') throw new Error(result.outcome);
    return result.row.uuid;
  }

  /** Runs `first` in a transaction held open until `second`, started meanwhile, waits for its lock; both outcomes. */
  async function race<A, B>(first: (tx: Sql) => Promise<A>, second: () => Promise<B>): Promise<[A, B]> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let secondDone!: Promise<B>;
    const firstDone = t.db.transaction(async (tx) => {
      const result = await first(tx);
      secondDone = second();
      await held;
      return result;
    });
    await someoneWaitsForALock();
    release();
    const a = await firstDone;
    return [a, await secondDone];
  }

  it("the payer's intent first: the claim, waiting for its lock, then finds the payout out and is refused", async () => {
    const uuid = await queued('race-intent-first');
    const [written, claimed] = await race(
      (tx) => recordIntent(tx, hotWalletIntent(uuid), 'sent'),
      () => t.db.transaction((tx) => claimForHand(tx, uuid)),
    );
    expect(written).toMatchObject({ withdrawal_uuid: uuid, payer: 'hot_wallet' });
    expect(claimed).toMatchObject({ outcome: 'refused', why: expect.stringMatching(/its payout is out/) });
  });

  it("the claim first: the payer's intent, waiting for its lock, then finds it claimed and writes nothing", async () => {
    const uuid = await queued('race-claim-first');
    const [claimed, written] = await race(
      (tx) => claimForHand(tx, uuid),
      () => t.db.transaction((tx) => recordIntent(tx, hotWalletIntent(uuid), 'sent')),
    );
    expect(claimed).toMatchObject({ outcome: 'claimed' });
    expect(written).toBeUndefined();
    expect(await t.db.query('SELECT 1 FROM payout_transactions WHERE withdrawal_uuid = $1', [uuid])).toEqual([]);
    expect((await t.platform.withdrawals.row(uuid))!.stage).toBe('queued');
  });
});
