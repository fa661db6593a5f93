// Two Tron payers whose rounds overlap (issue 53): two instances on one PostgreSQL database, each with
// its JobLease of payout:Tron (2 s here, 30 s in the platform) and its TronPayer, against the stand-in node
// (test/support/tron-node.ts), whose transaction reads come from backends behind the others (/wallet's 3
// blocks behind the head, /walletsolidity's 7 behind the solidified block). Payer A's round stalls in a
// node call (the stand-in holds it) after it saw a payout expired and unknown; its lease runs out, B takes the job over (a new fencing token) and rebuilds
// the payout; then A's call is answered and A goes on to rebuild it too, on its old view. Unfenced, that
// paid 18.5 USDT for a 9.25 withdrawal; fenced, A's write is refused (LeaseLostError), nothing it signed is
// broadcast, and the destination is paid once.
//
// PostgreSQL only: on PGlite one process owns the database (db/data-directory.ts locks DATA_DIR), so one
// payer runs every round and no round can overlap another's (test/server/jobs/lease-fence.test.ts checks
// that its leases are always held and unfenced). Real time passes here only for A's lease to run out: B
// asks for it until it gets it, and nothing asserts how long that took.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sha256 } from '@noble/hashes/sha2.js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Withdrawal } from '../../../src/client/index.js';
import { toTronAddress } from '../../../src/server/addresses/derivation.js';
import { openPostgres, type Database } from '../../../src/server/db/database.js';
import { LeaseLostError } from '../../../src/server/db/fence.js';
import { JobLease } from '../../../src/server/jobs/lease.js';
import { checkLedger } from '../../../src/server/ledger/ledger.js';
import { loadHotWallet, type HotWallet } from '../../../src/server/payouts/hot-wallet.js';
import { TronNode } from '../../../src/server/payouts/tron-node.js';
import { TronPayer, UNKNOWN_AGAIN_AFTER_BLOCKS } from '../../../src/server/payouts/tron-payer.js';
import { keyLeaks } from '../../support/key-leak.js';
import { livePlatform, TEST_DATABASE_URL, type TestPlatform } from '../../support/platform.js';
import { until } from '../../support/processes.js';
import { startTronNode, type TronNode as StandIn } from '../../support/tron-node.js';

const USDT = 'TR7NHqjeKQxGTCi8q8ZY4pL8otSzgjLj6t';
const SOLID_LAG = 19;
const LEASE_SECONDS = 2;

describe.skipIf(!TEST_DATABASE_URL)('two Tron payers whose rounds overlap, on PostgreSQL', () => {
  let t: TestPlatform;
  let other: Database;
  let node: StandIn;
  let dir: string;
  let keyHex: string;
  let wallet: HotWallet;
  let lines: string[];

  beforeEach(async () => {
    node = await startTronNode({ token: USDT, solidLag: SOLID_LAG });
    node.produceBlocks(30);
    dir = mkdtempSync(join(tmpdir(), 'tron-overlap-'));
    keyHex = randomBytes(32).toString('hex');
    const keyFile = join(dir, 'tron-payout.key');
    writeFileSync(keyFile, `${keyHex}\n`, { mode: 0o600 });
    chmodSync(keyFile, 0o600);
    wallet = await loadHotWallet('Tron', keyFile);
    node.setTokenBalance(wallet.address, 1_000_000_000n);
    node.setTrxBalance(wallet.address, 1_000_000_000n);
    node.produceBlocks(SOLID_LAG + 1);
    t = await livePlatform('postgres', { TRON_PAYOUT_KEY_FILE: keyFile });
    // The second instance's own connections to the same database.
    other = await openPostgres(t.databaseUrl!);
    await t.fund('Tron', 100_000_000n);
    lines = [];
  });
  afterEach(async () => {
    if (t) expect(await checkLedger(t.db)).toMatchObject({ problems: [] });
    expect(keyLeaks(lines, keyHex)).toEqual([]);
    await other?.close();
    await t?.close();
    await node?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** One instance: its lease of payout:Tron and its payer, on its own connections. */
  function instance(name: string, db: Database) {
    const record = (level: string) => (fields: object, message: string) => void lines.push(JSON.stringify({ level, instance: name, ...fields, message }));
    const log = { info: record('info'), warn: record('warn'), error: record('error') };
    const lease = new JobLease(db, 'payout:Tron', log, undefined, LEASE_SECONDS);
    // Its clock is the chain's true time, which only the test moves (3 s a block it makes).
    const payer = new TronPayer({ db, node: new TronNode(node.url), wallet, token: USDT, feeLimitSun: 100_000_000, expirationSeconds: 600, fundsWaitHours: 72, log, clock: () => node.head.timestamp });
    /** A round as jobs.ts runs it: under the lease it holds, fenced by it. */
    const round = async () => {
      expect(await lease.holds()).toBe(true);
      return payer.round(lease.fence());
    };
    return { lease, round };
  }

  const transactions = (uuid: string) => t.db.query<{ tx_hash: string; state: string }>('SELECT tx_hash, state FROM payout_transactions WHERE withdrawal_uuid = $1 ORDER BY id', [uuid]);

  it('pays once: the round that outlived its lease writes nothing once the other instance took the job over and rebuilt the payout', async () => {
    const to = toTronAddress(sha256(new TextEncoder().encode(`overlap destination ${Date.now()}`)).subarray(0, 20));
    const body = JSON.stringify({ externalId: `tron-overlap-${randomBytes(6).toString('hex')}`, blockchain: 'Tron', currency: 'USDT', amount: 9.25, destinationAddress: to });
    const response = await t.signed('POST', '/partner/v1/platforms/withdrawals', { body, headers: { 'Content-Type': 'application/json' } });
    const { uuid } = (await response.json()) as Withdrawal;
    const a = instance('A', t.db);
    const b = instance('B', other);
    // The node's transaction reads come from backends behind the others, each by its own count of blocks.
    node.lagWalletReads(3);
    node.lagSolidityReads(7);

    // A pays it; the node answers success and forgets the transaction: it will never be included.
    node.loseNextBroadcast('dropped');
    await a.round();
    const [first] = await transactions(uuid);
    const expiration = (await t.db.query<{ at: Date }>('SELECT expires_at AS at FROM payout_transactions WHERE tx_hash = $1', [first!.tx_hash]))[0]!.at.getTime();
    // The solidified block passes its expiration: A sees it unknown everywhere, once.
    while (node.solid.timestamp <= expiration) node.produceBlocks(1);
    await a.round();
    node.produceBlocks(UNKNOWN_AGAIN_AFTER_BLOCKS);

    // A's next round would rebuild it: one of its node calls hangs after it began.
    const held = node.holdNext('/wallet/gettransactioninfobyid');
    const stalled = a.round();
    await held.reached;
    // A's lease runs out; B takes the job over and, after two sightings of its own, rebuilds the payout.
    await until('B takes the lease A no longer renews', async () => ((await b.lease.holds()) ? true : undefined), 60_000);
    await b.round();
    node.produceBlocks(UNKNOWN_AGAIN_AFTER_BLOCKS);
    await b.round();
    const [dropped, rebuilt] = await transactions(uuid);
    expect(dropped).toEqual({ tx_hash: first!.tx_hash, state: 'dropped' });
    expect(rebuilt).toMatchObject({ state: 'pending' });
    expect(node.pending()).toEqual([rebuilt!.tx_hash]);

    // A's call is answered at last: on its old view it rebuilds the payout again, and its write is refused.
    held.release();
    await expect(stalled).rejects.toBeInstanceOf(LeaseLostError);
    expect(await transactions(uuid)).toEqual([dropped, rebuilt]);
    expect(new Set(node.broadcasts.map((sent) => sent.txID))).toEqual(new Set([first!.tx_hash, rebuilt!.tx_hash]));
    expect(await a.lease.holds()).toBe(false);

    node.produceBlocks(SOLID_LAG + 1 + 7);
    await b.round();
    const { data } = await t.client().GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid } } });
    expect(data).toMatchObject({ status: 'DONE', txId: rebuilt!.tx_hash });
    expect(node.tokenBalance(to)).toBe(9_250_000n);
    expect(node.tokenBalance(wallet.address)).toBe(1_000_000_000n - 9_250_000n);
  });
});
