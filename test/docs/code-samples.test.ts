// Every operation of the docs shows a curl + openssl sample, a TypeScript sample and a Python sample; each
// curl sample runs verbatim (bash, as the docs show it) and each Python sample runs verbatim (python3,
// standard library only) against a real sandbox platform that verifies its signature.
// The TypeScript samples run in test/package/client-package.test.ts, where the client is installed.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAddressDeriver } from '../../src/server/addresses/derivation.js';
import { SANDBOX_XPUBS } from '../../src/server/config.js';
import { SAMPLE_ORDER, sampledOperations, sampleOf } from '../support/code-samples.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

let platform: TestPlatform;
const ids: Record<string, string> = {};

beforeAll(async () => {
  platform = await startTestPlatform('pglite');
});
afterAll(async () => platform?.close());

/** The environment the samples name: the merchant's credentials, and the ids earlier samples made. */
function sampleEnv(extra: Record<string, string> = {}) {
  return {
    PATH: process.env.PATH,
    PARTNER_API_URL: platform.baseUrl,
    PARTNER_API_KEY: platform.merchant.apiKey,
    PARTNER_API_SECRET: platform.merchant.apiSecret,
    ...ids,
    ...extra,
  };
}

type Runner = (source: string, extra?: Record<string, string>) => Promise<unknown>;

const runShell: Runner = async (source, extra) => {
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', source], { env: sampleEnv(extra) });
  return JSON.parse(stdout);
};

const runPython: Runner = async (source, extra) => {
  const { stdout } = await promisify(execFile)('python3', ['-I', '-c', source], { env: sampleEnv(extra) });
  return JSON.parse(stdout);
};

interface Page<Item> {
  data: Item[];
  hasMore: boolean;
  nextCursor?: string;
}
interface FeedEvent {
  id: string;
  type: string;
  orderUuid: string;
  data: { event: string; uuid: string; amount?: number; receivedAmount: number; status: string; sequence: number };
  delivery: { state: string; attempts: number };
}

/**
 * The reconciliation samples, run after the order ORDER_UUID was credited its 30 USDT (DONE): its list
 * shows the order as its read does, the feed shows the deposit's event (EVENT_ID from here on) and reads
 * on from its nextCursor, the event's deliveries (no dispatcher runs here: none attempted yet), and its
 * redelivery (202, due again now).
 */
async function runReconciliationSamples(run: Runner, lang: 'Shell' | 'Python') {
  const orders = (await run(sampleOf('listDepositOrders', lang))) as Page<{ uuid: string }>;
  // Newest first: this run's order, then any DONE order of an earlier run.
  expect(orders.hasMore).toBe(false);
  expect(orders.data[0]).toMatchObject({ uuid: ids.ORDER_UUID, status: 'DONE', receivedAmount: 30000000 });
  expect(orders.data.every((o) => (o as { status?: string }).status === 'DONE')).toBe(true);
  expect(orders.data[0]).toEqual(await run(sampleOf('getDepositOrder', lang)));

  const feed = (await run(sampleOf('listEvents', lang))) as Page<FeedEvent>;
  expect(feed.hasMore).toBe(false);
  expect(feed.nextCursor).toEqual(expect.any(String));
  const events = feed.data.filter((e) => e.orderUuid === ids.ORDER_UUID);
  expect(events).toEqual([
    expect.objectContaining({
      type: 'order.deposit',
      data: expect.objectContaining({ event: 'order.deposit', uuid: ids.ORDER_UUID, amount: 30000000, receivedAmount: 30000000, status: 'DONE', sequence: 1 }),
      delivery: expect.objectContaining({ state: 'pending', attempts: 0, url: 'https://merchant.example/callbacks/deposits' }),
    }),
  ]);
  ids.EVENT_ID = events[0]!.id;
  // From the stored cursor: nothing new yet, and a cursor again.
  const after = (await run(sampleOf('listEvents', lang), { CURSOR: feed.nextCursor! })) as Page<FeedEvent>;
  expect(after).toMatchObject({ data: [], hasMore: false, nextCursor: expect.any(String) });

  expect(await run(sampleOf('listEventDeliveries', lang))).toMatchObject({ eventId: ids.EVENT_ID, delivery: { state: 'pending', attempts: 0 }, data: [] });
  expect(await run(sampleOf('redeliverEvent', lang))).toMatchObject({ eventId: ids.EVENT_ID, delivery: { state: 'pending' } });
}

/**
 * The sandbox withdrawal's samples, run on the balance the deposit sample credited (issue 57: the samples
 * chain, run in order: 30 USDT in, 13.5 for this withdrawal and 13.5 for the one from the balance, fee
 * included): the withdrawal (WITHDRAWAL_UUID from here on) is PENDING under `externalId`, and reads so.
 */
async function runSandboxWithdrawalSamples(run: Runner, lang: 'Shell' | 'Python', externalId: string): Promise<{ uuid: string }> {
  const withdrawal = (await run(sampleOf('createSandboxWithdrawal', lang))) as { uuid: string };
  expect(withdrawal).toMatchObject({ externalId, amount: 12.5, status: 'PENDING' });
  ids.WITHDRAWAL_UUID = withdrawal.uuid;
  expect(await run(sampleOf('getWithdrawal', lang))).toMatchObject({ uuid: withdrawal.uuid, status: 'PENDING' });
  return withdrawal;
}

/**
 * The money-out samples, run after the sandbox withdrawal WITHDRAWAL_UUID was set DONE: the balances
 * (what the withdrawals hold and took), the withdrawal terms, a withdrawal from the balance, and the feed of every event,
 * where the sandbox withdrawal's settlement is.
 */
async function runPayoutSamples(run: Runner, lang: 'Shell' | 'Python', externalId: string) {
  const balances = (await run(sampleOf('getBalances', lang))) as { data: { blockchain: string; available: number; withdrawn: number }[] };
  expect(balances.data.map((b) => b.blockchain)).toEqual(['Tron', 'Ethereum']);
  expect(balances.data[0]!.withdrawn).toBeGreaterThanOrEqual(13_500_000); // the sandbox withdrawal, fee included
  // The sandbox's terms: the networks' fees and minimums in whole units, no limit of the merchant's own.
  const none = { currency: 'USDT', enabled: true, maximum: null, dailyLimit: null, dailyLeft: null, approvalAbove: null, allowedDestinations: [] };
  expect(await run(sampleOf('getWithdrawalTerms', lang))).toEqual({
    data: [{ blockchain: 'Tron', ...none, fee: 1, minimum: 1 }, { blockchain: 'Ethereum', ...none, fee: 5, minimum: 10 }],
  });
  const withdrawal = await run(sampleOf('createWithdrawal', lang));
  expect(withdrawal).toMatchObject({ externalId, amount: 12.5, fee: 1, status: 'PENDING', stage: 'queued', callbackUrl: 'https://merchant.example/callbacks/withdrawals' });
  // The same request again is the same withdrawal.
  expect(await run(sampleOf('createWithdrawal', lang))).toEqual(withdrawal);
  const feed = (await run(sampleOf('listAllEvents', lang))) as Page<{ type: string; withdrawalUuid?: string; orderUuid?: string }>;
  expect(feed.data).toContainEqual(expect.objectContaining({ type: 'withdrawal.done', withdrawalUuid: ids.WITHDRAWAL_UUID }));
  expect(feed.data).toContainEqual(expect.objectContaining({ type: 'order.deposit', orderUuid: ids.ORDER_UUID }));
}

/** The modules a Python sample imports (every `import a, b.c` line). */
function pythonImports(source: string): string[] {
  return [...source.matchAll(/^import (.+)$/gm)].flatMap((m) => m[1]!.split(',').map((name) => name.trim().split('.')[0]!));
}

describe('the code samples of the docs', () => {
  it('cover every operation, in curl with openssl, in TypeScript with partner-api-client and in Python', () => {
    const operations = sampledOperations();
    expect(operations.map((o) => o.operationId).sort()).toEqual([...SAMPLE_ORDER].sort());
    for (const operation of operations) {
      expect(operation.samples.map((s) => s.lang)).toEqual(['Shell', 'TypeScript', 'Python']);
      const [shell, typescript, python] = operation.samples;
      expect(shell!.source).toContain('openssl dgst -sha256 -hmac');
      expect(shell!.source).toContain(`${operation.method.toUpperCase()} "$TARGET"`);
      expect(typescript!.source).toContain("from 'partner-api-client'");
      // The typed call of the path, or the client's own method of that name (createWithdrawal, getBalances, listAllEvents).
      const call = [`partner.${operation.method.toUpperCase()}('${operation.path}'`, `partner.${operation.operationId}(`];
      expect(call.some((text) => typescript!.source.includes(text)), operation.operationId).toBe(true);
      // The standard library only: nothing a merchant's Django service would have to install.
      expect(new Set(pythonImports(python!.source))).toEqual(new Set(['hashlib', 'hmac', 'json', 'os', 'time', 'urllib']));
      expect(python!.source).toContain('hmac.new(os.environ["PARTNER_API_SECRET"].encode(), message, hashlib.sha256).hexdigest()');
      expect(python!.source).toContain(`send("${operation.method.toUpperCase()}", `);
    }
  });

  it('come with the command that installs the client, in the guide', () => {
    const contract = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
    expect(contract.info.description).toContain('```sh\nnpm install "$PARTNER_API_URL/partner-api-client.tgz"\n```');
    for (const operation of sampledOperations()) {
      const typescript = operation.samples.find((s) => s.lang === 'TypeScript')!;
      expect(typescript.source.split('\n')[0]).toBe('// npm install "$PARTNER_API_URL/partner-api-client.tgz"; PARTNER_API_URL, PARTNER_API_KEY and PARTNER_API_SECRET in the environment.');
    }
  });

  it("send sample withdrawals to none of the sandbox wallet's deposit addresses (issue 49: one was index 1's, a newcomer's second order)", () => {
    const text = readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8');
    // Every destinationAddress of the contract: its examples, and its samples (JSON-escaped in their source).
    const destinations = [...text.matchAll(/destinationAddress\W+(T[1-9A-HJ-NP-Za-km-z]{33}|0x[0-9a-fA-F]{40})/g)].map((m) => m[1]!);
    expect(destinations.length).toBeGreaterThanOrEqual(8);
    const deposit = new Set<string>();
    for (const network of ['Tron', 'Ethereum'] as const) {
      const derive = createAddressDeriver(network, SANDBOX_XPUBS[network]);
      for (let index = 0; index < 300; index++) deposit.add(derive(index).toLowerCase());
    }
    expect(destinations.filter((address) => deposit.has(address.toLowerCase()))).toEqual([]);
  });

  it('run verbatim with bash against the sandbox, each answered as documented', async () => {
    const order = (await runShell(sampleOf('createDepositOrder', 'Shell'))) as { uuid: string; blockchain: string; address: string };
    expect(order).toMatchObject({ blockchain: 'Tron', status: 'NEW' });
    ids.ORDER_UUID = order.uuid;

    expect(await runShell(sampleOf('getDepositOrder', 'Shell'))).toMatchObject({ uuid: order.uuid, address: order.address, receivedAmount: 0 });
    expect(await runShell(sampleOf('simulateSandboxDeposit', 'Shell'))).toMatchObject({ uuid: order.uuid, receivedAmount: 30000000, status: 'DONE' });
    await runReconciliationSamples(runShell, 'Shell');

    const withdrawal = await runSandboxWithdrawalSamples(runShell, 'Shell', 'wd-1001');
    expect(await runShell(sampleOf('listWithdrawals', 'Shell'))).toEqual({
      data: [await runShell(sampleOf('getWithdrawal', 'Shell'))],
      hasMore: false,
    });
    expect(await runShell(sampleOf('setSandboxWithdrawalStatus', 'Shell'))).toMatchObject({ uuid: withdrawal.uuid, status: 'DONE' });
    await runPayoutSamples(runShell, 'Shell', 'wd-2001');
  });

  it('run verbatim with python3 (standard library) against the sandbox, each answered as documented', async () => {
    const order = (await runPython(sampleOf('createDepositOrder', 'Python'))) as { uuid: string; address: string };
    expect(order).toMatchObject({ blockchain: 'Tron', customerId: 'cust-42', status: 'NEW' });
    ids.ORDER_UUID = order.uuid;

    expect(await runPython(sampleOf('getDepositOrder', 'Python'))).toMatchObject({ uuid: order.uuid, address: order.address, receivedAmount: 0 });
    expect(await runPython(sampleOf('simulateSandboxDeposit', 'Python'))).toMatchObject({ uuid: order.uuid, receivedAmount: 30000000, status: 'DONE' });
    // The same Idempotency-Key again credits nothing.
    expect(await runPython(sampleOf('simulateSandboxDeposit', 'Python'))).toMatchObject({ uuid: order.uuid, receivedAmount: 30000000 });
    await runReconciliationSamples(runPython, 'Python');

    const withdrawal = await runSandboxWithdrawalSamples(runPython, 'Python', 'wd-1003');
    // The shell's sandbox withdrawal is DONE by now; its withdrawal from the balance is PENDING (no job settles it here).
    const pendingList = (await runPython(sampleOf('listWithdrawals', 'Python'))) as Page<{ externalId: string }>;
    expect(pendingList.hasMore).toBe(false);
    expect(pendingList.data).toContainEqual(await runPython(sampleOf('getWithdrawal', 'Python')));
    expect(pendingList.data.map((w) => w.externalId).sort()).toEqual(['wd-1003', 'wd-2001']);
    expect(await runPython(sampleOf('setSandboxWithdrawalStatus', 'Python'))).toMatchObject({ uuid: withdrawal.uuid, status: 'DONE' });
    await runPayoutSamples(runPython, 'Python', 'wd-2003');
  });

  it('fail loudly when the signature is wrong (the samples really sign)', async () => {
    const source = sampleOf('getDepositOrder', 'Shell').replace('"$PARTNER_API_SECRET"', '"not-the-secret"');
    const failure = (await runShell(source).catch((error: unknown) => error)) as { code?: number; stdout?: string };
    expect(failure.code).toBe(22); // curl --fail-with-body: an HTTP error, with the problem printed
    expect(JSON.parse(failure.stdout!)).toMatchObject({ status: 401, code: 'invalid_signature' });

    const python = sampleOf('getDepositOrder', 'Python').replace('os.environ["PARTNER_API_SECRET"]', '"not-the-secret"');
    const refused = (await runPython(python).catch((error: unknown) => error)) as { code?: number; stderr?: string };
    expect(refused.code).toBe(1); // SystemExit with the status and the problem
    const [status, ...problem] = refused.stderr!.trim().split(' ');
    expect(status).toBe('401');
    expect(JSON.parse(problem.join(' '))).toMatchObject({ status: 401, code: 'invalid_signature' });
  });
});
