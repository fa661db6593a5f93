// What the tests of paying withdrawals on anvil share: a fresh destination per withdrawal, and the
// invariants every payout run must leave behind (issue 53), checked on the chain and in the database
// once the platform has stopped, every broken one listed in one failure.
import { randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { Database } from '../../src/server/db/database.js';
import { loadHotWallet, type HotWallet } from '../../src/server/payouts/hot-wallet.js';
import type { TronNode } from './tron-node.js';
import { addressTopic, normalizeAddress, TRANSFER_TOPIC, type Chain, type Hex, type Token } from './chain.js';
import { runCommand } from './cli.js';
import { keyLeaks } from './key-leak.js';

/** A random destination per withdrawal (no wallet's), so that its balance shows exactly its payout. */
/**
 * A Tron hot wallet for the stand-in node: a fresh key in a key file (0600) of a fresh directory, the
 * wallet loaded from it as the platform loads it, holding 50 USDT and 500 TRX, and the node's first `blocks`.
 */
export async function fundedTronWallet(node: TronNode, dirPrefix: string, blocks = 20): Promise<{ dir: string; keyFile: string; wallet: HotWallet }> {
  const dir = mkdtempSync(join(tmpdir(), dirPrefix));
  const keyFile = join(dir, 'tron-payout.key');
  writeFileSync(keyFile, randomBytes(32).toString('hex'), { mode: 0o600 });
  chmodSync(keyFile, 0o600); // whatever the umask
  const wallet = await loadHotWallet('Tron', keyFile);
  node.setTokenBalance(wallet.address, 50_000_000n);
  node.setTrxBalance(wallet.address, 500_000_000n);
  node.produceBlocks(blocks);
  return { dir, keyFile, wallet };
}

export function randomDestination(): string {
  return `0x${randomBytes(20).toString('hex')}`;
}

/** A withdrawal the test asked for: what its destination must hold in the end. */
export interface Asked {
  uuid: string;
  to: string;
  /** Smallest units. */
  amount: bigint;
}

export interface PaidRun {
  chain: Chain;
  token: Token;
  /** The hot wallet's address. */
  wallet: string;
  /** The hot wallet's key, 64 hex digits: what no captured line may show. */
  keyHex: string;
  asked: readonly Asked[];
  /** Transactions of the hot wallet that the test itself sent (outside ones, no Transfer of the token). */
  outside: number;
  /** The first block the run's transactions can be in (the hot wallet is the run's own). */
  fromBlock: bigint;
  /** The run's database, the platform stopped (PGlite's data directory is locked while it runs). */
  db: Database;
  /** The environment `partner-api ledger check` runs with (its database). */
  env: Record<string, string>;
  /** Every line the platform's processes wrote. */
  output: readonly string[];
  /** What the run itself found wrong (still unsettled when it stopped waiting, a stall without its replacements), one line each, reported with the rest. */
  found: readonly string[];
}

export interface PaidFindings {
  /** The payout's transactions (the first and its replacements, those paid anew too) by withdrawal. */
  candidates: Map<string, number>;
  /** Transfers of the token from the hot wallet. */
  transfers: number;
}

/**
 * Each destination holds exactly its amount; the hot wallet's Transfer logs are as many as the DONE
 * withdrawals and its nonce is its transfers plus the test's outside transactions (so nothing of it
 * reverted), every one of its receipts succeeded; each DONE withdrawal's txId is a successful transaction
 * in the chain; no withdrawal is `sent` without a pending or mined payout transaction; `ledger check`
 * says the books agree; the key is in no captured line. Fails once, listing every broken invariant.
 */
export async function assertPaidExactlyOnce(run: PaidRun): Promise<PaidFindings> {
  const { chain, token, asked, db } = run;
  const wallet = normalizeAddress(run.wallet);
  const problems: string[] = [...run.found];

  for (const { uuid, to, amount } of asked) {
    const held = await token.balanceOf(to);
    if (held !== amount) problems.push(`withdrawal ${uuid}: its destination holds ${held} units for ${amount} asked (paid ${Number(held) / Number(amount)} times)`);
  }

  const head = await chain.blockNumber();
  const transfers = (await chain.getLogs({ address: token.address, topics: [TRANSFER_TOPIC, addressTopic(wallet)], fromBlock: run.fromBlock, toBlock: head })).length;
  const nonce = BigInt(await chain.rpc<Hex>('eth_getTransactionCount', [wallet, toHex(head)]));
  const reverted: string[] = [];
  for (let n = run.fromBlock; n <= head; n++) {
    const block = await chain.rpc<{ transactions: { hash: Hex; from: string }[] }>('eth_getBlockByNumber', [toHex(n), true]);
    for (const tx of block.transactions.filter((t) => t.from.toLowerCase() === wallet)) {
      const receipt = await chain.rpc<{ status: Hex }>('eth_getTransactionReceipt', [tx.hash]);
      if (receipt.status !== '0x1') reverted.push(`${tx.hash} (block ${n})`);
    }
  }
  if (reverted.length > 0) problems.push(`${reverted.length} transaction(s) of the hot wallet reverted: ${reverted.join(', ')}`);

  const uuids = asked.map((w) => w.uuid);
  const rows = await db.query<{ uuid: string; status: string; stage: string | null; tx_id: string | null }>('SELECT uuid::text AS uuid, status, stage, tx_id FROM withdrawals WHERE uuid = ANY($1::uuid[])', [uuids]);
  const done = rows.filter((r) => r.status === 'DONE');
  for (const row of done) {
    const receipt = row.tx_id ? await chain.rpc<{ status: Hex } | null>('eth_getTransactionReceipt', [row.tx_id]) : null;
    if (receipt?.status !== '0x1') problems.push(`withdrawal ${row.uuid} is DONE with txId ${row.tx_id}, which is ${receipt ? 'reverted' : 'in no block of the chain'}`);
  }
  if (transfers !== done.length) problems.push(`the hot wallet sent ${transfers} transfers of the token for ${done.length} DONE withdrawals (of ${asked.length} asked)`);
  if (nonce !== BigInt(transfers + run.outside)) problems.push(`the hot wallet's nonce is ${nonce}, its transfers ${transfers} and the test's outside transactions ${run.outside}`);

  const adrift = await db.query<{ uuid: string }>(
    `SELECT uuid::text AS uuid FROM withdrawals w WHERE stage = 'sent' AND uuid = ANY($1::uuid[])
       AND NOT EXISTS (SELECT 1 FROM payout_transactions p WHERE p.withdrawal_uuid = w.uuid AND p.state IN ('pending', 'mined'))`,
    [uuids],
  );
  for (const { uuid } of adrift) problems.push(`withdrawal ${uuid} is sent without a pending or mined transaction`);
  const counted = await db.query<{ uuid: string; count: number }>('SELECT withdrawal_uuid::text AS uuid, count(*)::int AS count FROM payout_transactions WHERE withdrawal_uuid = ANY($1::uuid[]) GROUP BY withdrawal_uuid', [uuids]);
  const candidates = new Map(counted.map((c) => [c.uuid, Number(c.count)]));

  await db.close();
  const check = await runCommand(['ledger', 'check'], run.env);
  if (check.code !== 0 || !/the books agree/.test(check.stdout)) problems.push(`ledger check (exit ${check.code}): ${check.stdout.trim()} ${check.stderr.trim()}`);

  // The platform did write its payouts' lines (so the search below searched something).
  if (!run.output.some((text) => /payout signed and written/.test(text))) problems.push('no captured line shows a payout: the key-leak search searched nothing');
  for (const leak of keyLeaks(run.output, run.keyHex)) problems.push(`the key in a line: ${leak}`);

  expect(problems).toEqual([]);
  return { candidates, transfers };
}

const toHex = (n: bigint) => `0x${n.toString(16)}`;
