// Issue 34, item 2: a merchant rolls its secrets with no moment in which its requests fail or its
// callbacks fail to verify (docs/operating.md, Merchants and their secrets). A client keeps calling
// through `merchants rotate-secrets` and switches to the new API secret the moment the command returns;
// the old secret keeps working during the grace period and is refused once it ends; callbacks during
// the grace carry both signatures. On PostgreSQL the operator's command runs as an operator runs it,
// beside the serving platform on its database; PGlite is one process's database (the command waits for
// the server to stop), so there the command's own call runs on the serving platform's merchants.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CallbackVerificationError, verifyCallback } from '../../../src/client/index.js';
import { CallbackDispatcher } from '../../../src/server/callbacks/dispatcher.js';
import type { MerchantCredentials } from '../../../src/server/merchants/secrets.js';
import { runCommand } from '../../support/cli.js';
import { DATABASES, startTestPlatform, TEST_SECRET_KEY, type TestPlatform } from '../../support/platform.js';
import { startReceiver, type Delivery, type Receiver } from '../../support/receiver.js';
import { orderRequest } from '../../fixtures/orders.js';

const JSON_TYPE = { 'Content-Type': 'application/json' };

type Rotated = MerchantCredentials & { name: string; previousSecretsValidUntil: string | null };

describe.each(DATABASES)("rolling a merchant's secrets on %s", (kind) => {
  let t: TestPlatform;
  let receiver: Receiver;
  let dispatcher: CallbackDispatcher;
  /** The platform's clock: real time, moved ahead to let its merchant cache run out. */
  let ahead = 0;
  const dataDir = mkdtempSync(join(tmpdir(), 'partner-rotation-'));

  beforeAll(async () => {
    receiver = await startReceiver();
    t = await startTestPlatform(kind, {
      now: () => Date.now() + ahead,
      env: { ALLOW_PRIVATE_CALLBACKS: 'true', CALLBACK_RETRY_SCHEDULE: '5,60', CALLBACK_TIMEOUT_SECONDS: '2' },
    });
    // The webhook-timestamp in real time: the standardwebhooks package checks it against the real clock.
    dispatcher = new CallbackDispatcher({ db: t.db, secrets: t.platform.secrets, config: t.platform.config.callbacks, mode: 'sandbox', now: Date.now });
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function operator(args: string[]): Promise<unknown> {
    const { code, stdout, stderr } = await runCommand([...args, '--json'], { DATABASE_URL: t.databaseUrl!, SECRET_KEY: TEST_SECRET_KEY, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    expect(stderr).toBe('');
    expect(code).toBe(0);
    return JSON.parse(stdout);
  }

  /** `partner-api merchants rotate-secrets --api-key … [--grace …]`. */
  async function rotate(apiKey: string, grace?: { flag: string; seconds: number }): Promise<Rotated> {
    if (kind === 'postgres') return (await operator(['merchants', 'rotate-secrets', '--api-key', apiKey, ...(grace ? ['--grace', grace.flag] : [])])) as Rotated;
    return (await t.platform.merchants.rotateSecrets(apiKey, grace?.seconds ?? 24 * 3600))!;
  }

  /** `partner-api merchants end-grace --api-key …`. */
  async function endGrace(apiKey: string): Promise<boolean> {
    if (kind === 'postgres') {
      const ended = (await operator(['merchants', 'end-grace', '--api-key', apiKey])) as { graceEnded: boolean; refusedEverywhereBy?: string };
      // Another process's command: it says by when every instance refuses the old secret (their 30 s cache).
      if (ended.graceEnded) expect(Math.abs(Date.parse(`${ended.refusedEverywhereBy!.replace(' ', 'T')}Z`) - Date.now() - 30_000)).toBeLessThan(5_000);
      return ended.graceEnded;
    }
    return (await t.platform.merchants.endGrace(apiKey))!.ended;
  }

  /** A client reading an order again and again, every few ms, with the credentials `credentials()` gives at each call. */
  function keepCalling(path: string, credentials: () => MerchantCredentials) {
    const failures: string[] = [];
    let calls = 0;
    let stopped = false;
    const running = (async () => {
      while (!stopped) {
        const response = await t.signed('GET', path, { credentials: credentials() });
        calls++;
        if (response.status !== 200) failures.push(`${response.status} ${await response.text()}`);
        await sleep(3);
      }
    })();
    return {
      failures,
      calls: () => calls,
      async until(count: number) {
        const target = calls + count;
        while (calls < target && !stopped) await sleep(5);
      },
      async stop() {
        stopped = true;
        await running;
      },
    };
  }

  async function orderFor(credentials: MerchantCredentials, externalId: string) {
    const { data, response } = await t.client(credentials).POST('/partner/v1/platforms/orders', {
      body: orderRequest(externalId, { callbackUrl: `${receiver.url}/ok/${externalId}` }),
    });
    expect(response.status).toBe(201);
    return data!;
  }

  /** A deposit on the order, and its callback as the receiver got it. */
  async function depositCallback(credentials: MerchantCredentials, uuid: string, externalId: string, nth: number): Promise<Delivery> {
    const response = await t.signed('POST', `/sandbox/v1/orders/${uuid}/deposits`, { body: JSON.stringify({ amount: 1000 }), headers: JSON_TYPE, credentials });
    expect(response.status).toBe(201);
    while ((await dispatcher.runOnce()) > 0);
    return (await receiver.waitFor(nth, (d) => d.path === `/ok/${externalId}`))[nth - 1]!;
  }

  const headersOf = (delivery: Delivery) => delivery.headers as Record<string, string>;
  const verifies = (delivery: Delivery, secret: string) => verifyCallback(delivery.body, headersOf(delivery), secret);
  const verifiesWithLibrary = (delivery: Delivery, secret: string) => new Webhook(secret).verify(delivery.body, headersOf(delivery));

  it('lets a client switch at once, keeps the old secrets through the grace period, and refuses them once it is ended', async () => {
    const merchant = await t.createMerchant('rolling');
    const order = await orderFor(merchant, 'roll-1');
    const path = `/partner/v2/platforms/orders/${order.uuid}`;
    let current: MerchantCredentials = merchant;
    const switching = keepCalling(path, () => current);
    const staying = keepCalling(path, () => merchant);
    await Promise.all([switching.until(20), staying.until(20)]); // both read the merchant into the cache

    const rotated = await rotate(merchant.apiKey);
    current = rotated; // the moment the command returns
    expect(rotated).toMatchObject({ merchantId: merchant.merchantId, apiKey: merchant.apiKey, name: 'rolling' });
    expect(rotated.apiSecret).not.toBe(merchant.apiSecret);
    expect(rotated.callbackSecret).not.toBe(merchant.callbackSecret);
    const validUntil = rotated.previousSecretsValidUntil!;
    // The command prints the API's date shape (UTC); the platform's own call an ISO time.
    expect(Math.abs(Date.parse(kind === 'postgres' ? `${validUntil.replace(' ', 'T')}Z` : validUntil) - Date.now() - 24 * 3600_000)).toBeLessThan(60_000); // 24 h by default
    await Promise.all([switching.until(50), staying.until(50)]);
    expect(switching.failures).toEqual([]);
    expect(staying.failures).toEqual([]); // the old API secret during the grace period

    // A callback during the grace period carries both signatures, the new secret's first.
    const inGrace = await depositCallback(rotated, order.uuid, 'roll-1', 1);
    const signatures = headersOf(inGrace)['webhook-signature']!.split(' ');
    expect(signatures).toHaveLength(2);
    await expect(verifies({ ...inGrace, headers: { ...inGrace.headers, 'webhook-signature': signatures[0] } }, rotated.callbackSecret)).resolves.toMatchObject({ uuid: order.uuid });
    for (const secret of [rotated.callbackSecret, merchant.callbackSecret]) {
      await expect(verifies(inGrace, secret)).resolves.toMatchObject({ event: 'order.deposit', uuid: order.uuid });
      expect(verifiesWithLibrary(inGrace, secret)).toMatchObject({ event: 'order.deposit', uuid: order.uuid });
    }

    // The operator ends the grace period (a leak): every instance refuses the old secret within its
    // merchant cache's 30 s (here: the platform's clock moved past it), the new one never fails.
    await staying.stop();
    expect(await endGrace(merchant.apiKey)).toBe(true);
    expect(await endGrace(merchant.apiKey)).toBe(false); // nothing left to end
    if (kind === 'pglite') {
      // Ended through this instance (on PGlite the platform runs the operator's command itself): refused
      // at once, not once its cache runs out (issue 49).
      expect((await t.signed('GET', path, { credentials: merchant })).status).toBe(401);
    }
    ahead = 31_000;
    await switching.until(20);
    const old = await t.signed('GET', path, { credentials: merchant });
    expect(old.status).toBe(401);
    expect(await old.json()).toMatchObject({ code: 'invalid_signature' });
    await switching.until(20);
    await switching.stop();
    expect(switching.failures).toEqual([]);
    expect(staying.calls() + switching.calls()).toBeGreaterThan(100);

    // A callback after the grace period verifies with the new secret only.
    const after = await depositCallback(rotated, order.uuid, 'roll-1', 2);
    expect(headersOf(after)['webhook-signature']!.split(' ')).toHaveLength(1);
    await expect(verifies(after, rotated.callbackSecret)).resolves.toMatchObject({ uuid: order.uuid });
    await expect(verifies(after, merchant.callbackSecret)).rejects.toThrow(CallbackVerificationError);
    expect(() => verifiesWithLibrary(after, merchant.callbackSecret)).toThrow();
    expect(verifiesWithLibrary(after, rotated.callbackSecret)).toMatchObject({ uuid: order.uuid });
  });

  it.runIf(kind === 'postgres')('says, ending a grace in its own process, by when every instance refuses the old secret', async () => {
    const merchant = await t.createMerchant('told when');
    await rotate(merchant.apiKey);
    const { code, stdout } = await runCommand(['merchants', 'end-grace', '--api-key', merchant.apiKey], { DATABASE_URL: t.databaseUrl!, SECRET_KEY: TEST_SECRET_KEY, DATA_DIR: dataDir, LOG_LEVEL: 'silent' });
    expect(code).toBe(0);
    const by = /until (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d) UTC at the latest/.exec(stdout)?.[1];
    expect(stdout).toBe(`the old secrets of merchant told when are refused from now on by this database; instances that read the merchant before keep accepting them until ${by} UTC at the latest (their 30 s cache)\n`);
    expect(Math.abs(Date.parse(`${by!.replace(' ', 'T')}Z`) - Date.now() - 30_000)).toBeLessThan(5_000);
  });

  it('refuses the old secrets when the grace period runs out by itself, without waiting for the cache', async () => {
    ahead = 0;
    const merchant = await t.createMerchant('short grace');
    const order = await orderFor(merchant, 'roll-2');
    const path = `/partner/v2/platforms/orders/${order.uuid}`;
    expect((await t.signed('GET', path, { credentials: merchant })).status).toBe(200); // cached
    const rotated = await rotate(merchant.apiKey, { flag: '2s', seconds: 2 });
    // The command's time is in whole seconds (cut, not rounded): the grace ends within the second after it.
    const until = kind === 'postgres' ? Date.parse(`${rotated.previousSecretsValidUntil!.replace(' ', 'T')}Z`) + 1000 : Date.parse(rotated.previousSecretsValidUntil!);
    expect((await t.signed('GET', path, { credentials: rotated })).status).toBe(200);
    expect((await t.signed('GET', path, { credentials: merchant })).status).toBe(200);
    await sleep(Math.max(0, until - Date.now()) + 200);
    const old = await t.signed('GET', path, { credentials: merchant });
    expect(old.status).toBe(401);
    expect(await old.json()).toMatchObject({ code: 'invalid_signature' });
    expect((await t.signed('GET', path, { credentials: rotated })).status).toBe(200);
    const delivery = await depositCallback(rotated, order.uuid, 'roll-2', 1);
    expect(headersOf(delivery)['webhook-signature']!.split(' ')).toHaveLength(1);
    await expect(verifies(delivery, merchant.callbackSecret)).rejects.toThrow(CallbackVerificationError);
    await expect(verifies(delivery, rotated.callbackSecret)).resolves.toMatchObject({ uuid: order.uuid });
  });

  it('reads a merchant again for a signature no cached secret matches, at most once a second however many arrive', async () => {
    ahead = 0;
    const merchant = await t.createMerchant('flooded');
    const order = await orderFor(merchant, 'roll-3');
    const path = `/partner/v2/platforms/orders/${order.uuid}`;
    expect((await t.signed('GET', path, { credentials: merchant })).status).toBe(200); // cached
    const lookups = vi.spyOn(t.platform.merchants, 'byApiKey');
    try {
      const wrong = { ...merchant, apiSecret: `${merchant.apiSecret}x` };
      const started = performance.now();
      const flood = [];
      for (let round = 0; round < 3; round++) {
        flood.push(...(await Promise.all(Array.from({ length: 10 }, () => t.signed('GET', path, { credentials: wrong })))));
      }
      const seconds = (performance.now() - started) / 1000;
      expect(flood.map((r) => r.status)).toEqual(Array(30).fill(401));
      expect(lookups.mock.calls.length).toBeLessThanOrEqual(Math.ceil(seconds) + 1);
      // Rotated by another process (a second instance's operator): the new secret works at once.
      lookups.mockClear();
      const rotated = await rotate(merchant.apiKey, { flag: '0', seconds: 0 });
      expect((await t.signed('GET', path, { credentials: rotated })).status).toBe(200);
      expect(lookups).toHaveBeenCalledTimes(1);
    } finally {
      lookups.mockRestore();
    }
  });
});
