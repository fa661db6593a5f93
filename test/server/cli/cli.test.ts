// The partner-api command as an operator runs it: its output and exit codes. Most commands run in this
// process through runCli, which the shipped bin runs with the process's argv, environment and output: a
// process per command cost seconds of CPU each, over a hundred times. Real processes where the process
// is what is tested: exit codes through process.exit (and that they match runCli's), the server's
// banner, signals and logs, and the lock between processes.
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPartnerClient } from '../../../src/client/index.js';
import { readConfig } from '../../../src/server/config.js';
import { openPlatform } from '../../../src/server/platform.js';
import { signRequest } from '../../../src/signing/index.js';
import { copiedDataDirectory } from '../../support/database-templates.js';
import { loadedModules, runCommand as cli, runProcess as command } from '../../support/cli.js';
import { startPartnerApi, type Credentials } from '../../support/partner-api.js';
import type { Started } from '../../support/processes.js';
import { orderRequest, SAMPLE_TRON_DESTINATION } from '../../fixtures/orders.js';

const dataDirs: string[] = [];

function freshDataDir() {
  const dir = mkdtempSync(join(tmpdir(), 'partner-cli-'));
  dataDirs.push(dir);
  return dir;
}

let shared: string | undefined;
/** One data directory for the commands below that only need a database, not a new one: a copy of the
 * run's template, its database created and migrated (a new one is created by serve in
 * test/server/db/data-directory.test.ts, and by the installed package's first command in
 * test/package/platform-package.test.ts). */
function sharedDataDir() {
  if (!shared) dataDirs.push((shared = copiedDataDirectory('partner-cli-')));
  return shared;
}

afterAll(() => dataDirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

describe('partner-api refuses a bad configuration at start', () => {
  it.each([
    [['serve', '--port', '99999'], /PORT must be a whole number from 0 to 65535/],
    [['serve', '--mode', 'staging'], /--mode must be sandbox or live/],
    [['serve', '--mode', 'live'], /SECRET_KEY is required in live mode/],
    [['serve', '--tron-xpub', 'xprv9s21ZrQH143K3QTDL4LXw2F7HEK3wJUD2nW2nRk4stbPy6cq3jPPqjiChkVvvNKmPGJxWUtg6LETS7JY3xMYLp9fQpz1T3hNybGCC4bLgVS'], /extended private key/],
    [['serve', '--rate-limit', 'lots'], /RATE_LIMIT must be "requests\/seconds"/],
    [['serve', '--database-url', 'postgres://u:p@db.invalid/x'], /--database-url is refused: .*set DATABASE_URL or DATABASE_URL_FILE/],
    [['serve', '--no-such-flag', '1'], /unknown flag --no-such-flag/],
    [['merchants', 'create'], /--name is required/],
    [['frobnicate'], /unknown command frobnicate/],
  ])('%j', async (args, message) => {
    const { code, stderr } = await cli(args, { DATA_DIR: freshDataDir() });
    expect(code).not.toBe(0);
    expect(stderr).toMatch(message);
  });

  it('refuses live mode with the public test wallet', async () => {
    const { code, stderr } = await cli(['serve', '--mode', 'live'], {
      DATA_DIR: freshDataDir(),
      SECRET_KEY: Buffer.alloc(32, 1).toString('base64'),
      TRON_XPUB: 'xpub6D1AabNHCupeiLM65ZR9UStMhJ1vCpyV4XbZdyhMZBiJXALQtmn9p42VTQckoHVn8WNqS7dqnJokZHAHcHGoaQgmv8D45oNUKx6DZMNZBCd',
      ETHEREUM_XPUB: 'xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt',
    });
    expect(code).toBe(78);
    expect(stderr).toMatch(/public test wallet/);
  });
});

describe('operator commands', () => {
  it('creates a merchant and prints its credentials as JSON', async () => {
    const { code, stdout } = await cli(['merchants', 'create', '--name', 'Shop', '--json'], { DATA_DIR: await sharedDataDir() });
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({
      name: 'Shop',
      merchantId: expect.stringMatching(/^[0-9a-f-]{36}$/),
      apiKey: expect.stringMatching(/^pk_test_/),
      apiSecret: expect.stringMatching(/^sk_test_/),
      callbackSecret: expect.stringMatching(/^whsec_/),
    });
  });

  it('refuses a second merchant with a name another has, naming that one (issue 49)', async () => {
    const env = { DATA_DIR: await sharedDataDir() };
    const first = JSON.parse((await cli(['merchants', 'create', '--name', 'Twin shop', '--json'], env)).stdout) as Credentials;
    const second = await cli(['merchants', 'create', '--name', 'Twin shop', '--display-name', 'Twin'], env);
    expect(second).toEqual({
      code: 1,
      stdout: '',
      stderr: `partner-api: a merchant named "Twin shop" exists (API key ${first.apiKey}): names tell merchants apart in reports and logs; choose another --name\n`,
    });
    const twin2 = await cli(['merchants', 'create', '--name', 'Twin shop 2'], env);
    expect(twin2.code).toBe(0);
    // As the banner: the guide's variables, ready to paste (issue 57).
    const key = /^apiKey: (\S+)$/m.exec(twin2.stdout)![1];
    expect(twin2.stdout).toContain(`For a shell (the guide's examples read these, with PARTNER_API_URL the platform's address):\n  export PARTNER_API_KEY='${key}'\n  export PARTNER_API_SECRET='sk_test_`);
    expect(twin2.stdout).toMatch(/^  export PARTNER_CALLBACK_SECRET='whsec_[^']+'$/m);
  });

  it('creates a merchant with the name payers see, then changes and removes it', async () => {
    const env = { DATA_DIR: await sharedDataDir() };
    const created = await cli(['merchants', 'create', '--name', 'Shop internal', '--display-name', 'Acme <Shop> & Co', '--json'], env);
    expect(created.code).toBe(0);
    const credentials = JSON.parse(created.stdout) as Credentials & { displayName: string };
    expect(credentials.displayName).toBe('Acme <Shop> & Co');
    const set = await cli(['merchants', 'set-display-name', '--api-key', credentials.apiKey, '--display-name', 'Acme', '--json'], env);
    expect(set.code).toBe(0);
    expect(JSON.parse(set.stdout)).toMatchObject({ name: 'Shop internal', displayName: 'Acme' });
    const cleared = await cli(['merchants', 'set-display-name', '--api-key', credentials.apiKey, '--clear'], env);
    expect(cleared.code).toBe(0);
    expect(cleared.stdout).toBe('name: Shop internal\ndisplayName: (none)\n');
    for (const [args, message] of [
      [['--api-key', credentials.apiKey], 'give either --display-name or --clear'],
      [['--api-key', credentials.apiKey, '--display-name', 'x', '--clear'], 'give either --display-name or --clear'],
      [['--api-key', credentials.apiKey, '--display-name', 'x'.repeat(101)], '--display-name must be 1 to 100 characters of UTF-8 text without control characters'],
    ] as const) {
      const refused = await cli(['merchants', 'set-display-name', ...args], env);
      expect(refused.code, args.join(' ')).toBe(64);
      expect(refused.stderr).toContain(message);
    }
    const unknown = await cli(['merchants', 'set-display-name', '--api-key', 'pk_test_nobody', '--clear'], env);
    expect(unknown.code).toBe(1);
  });

  it("rotates a merchant's secrets: the new API secret works, the old one during the grace period only", async () => {
    const env = { DATA_DIR: await sharedDataDir() };
    const before = JSON.parse((await cli(['merchants', 'create', '--name', 'R', '--json'], env)).stdout) as Credentials & { merchantId: string };
    const rotated = await cli(['merchants', 'rotate-secrets', '--api-key', before.apiKey, '--json'], env);
    expect(rotated.code).toBe(0);
    const after = JSON.parse(rotated.stdout) as Credentials & { merchantId: string; previousSecretsValidUntil: string };
    expect(after).toMatchObject({ name: 'R', merchantId: before.merchantId, apiKey: before.apiKey, apiSecret: expect.stringMatching(/^sk_test_/) });
    expect(after.apiSecret).not.toBe(before.apiSecret);
    expect(after.callbackSecret).not.toBe(before.callbackSecret);
    // The API's date shape, UTC (issue 49): 24 h by default.
    expect(after.previousSecretsValidUntil).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    expect(Math.abs(Date.parse(`${after.previousSecretsValidUntil.replace(' ', 'T')}Z`) - Date.now() - 24 * 3600_000)).toBeLessThan(60_000);
    const unknown = await cli(['merchants', 'rotate-secrets', '--api-key', 'pk_test_nobody'], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe('partner-api: no merchant has the API key pk_test_nobody\n');
    const noGrace = await cli(['merchants', 'end-grace', '--api-key', 'pk_test_nobody'], env);
    expect(noGrace.code).toBe(1);
    expect(noGrace.stderr).toBe('partner-api: no merchant has the API key pk_test_nobody\n');

    // The platform on that data directory, as serve opens it, listening on a free port.
    const serve = async (work: (client: (credentials: Credentials) => ReturnType<typeof createPartnerClient>) => Promise<void>) => {
      const platform = await openPlatform(readConfig({ ...env, LOG_LEVEL: 'silent' }), { logger: false });
      try {
        const baseUrl = await platform.app.fastify.listen({ host: '127.0.0.1', port: 0 });
        await work((credentials) => createPartnerClient({ baseUrl, apiKey: credentials.apiKey, apiSecret: credentials.apiSecret }));
      } finally {
        await platform.close();
      }
    };
    await serve(async (client) => {
      expect((await client(before).POST('/partner/v1/platforms/orders', { body: orderRequest('rotated-old') })).response.status).toBe(201);
      expect((await client(after).POST('/partner/v1/platforms/orders', { body: orderRequest('rotated-new') })).response.status).toBe(201);
    });

    const ended = await cli(['merchants', 'end-grace', '--api-key', before.apiKey], env);
    // On the embedded database the platform that runs the command is the only instance (issue 49: no "within 30 s" any more).
    expect(ended).toEqual({ code: 0, stdout: 'the old secrets of merchant R are refused from now on\n', stderr: '' });
    const again = await cli(['merchants', 'end-grace', '--api-key', before.apiKey, '--json'], env);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ name: 'R', apiKey: before.apiKey, graceEnded: false });
    // --grace 0: the secrets replaced stop at once.
    const leaked = JSON.parse((await cli(['merchants', 'rotate-secrets', '--api-key', before.apiKey, '--grace', '0', '--json'], env)).stdout) as Credentials & { previousSecretsValidUntil: null };
    expect(leaked.previousSecretsValidUntil).toBeNull();
    await serve(async (client) => {
      for (const [credentials, id] of [[before, 'ended-old'], [after, 'leaked-old']] as const) {
        const old = await client(credentials).POST('/partner/v1/platforms/orders', { body: orderRequest(id) });
        expect(old.response.status).toBe(401);
        expect(old.error).toMatchObject({ code: 'invalid_signature' });
      }
      expect((await client(leaked).POST('/partner/v1/platforms/orders', { body: orderRequest('leaked-new') })).response.status).toBe(201);
    });
  });

  it.each([['8d'], ['30'], ['1w'], ['1.5h'], ['24 h'], ['']])('refuses --grace %j, exit 64', async (grace) => {
    const { code, stdout, stderr } = await cli(['merchants', 'rotate-secrets', '--api-key', 'pk_test_x', '--grace', grace], { DATA_DIR: freshDataDir() });
    expect(code).toBe(64);
    expect(stdout).toBe('');
    expect(stderr).toBe('partner-api: --grace must be 0 or a duration up to 7d with its unit, e.g. 90s, 30m, 24h, 7d (see partner-api merchants rotate-secrets --help)\n');
  });
});

describe('partner-api as shipped software: help, version, usage errors, one line per failure', () => {
  const COMMANDS: [string[], string[]][] = [
    [['serve'], ['--port', 'PORT', '--data-dir', 'DATABASE_URL']],
    [['merchants', 'create'], ['--name NAME']],
    [['merchants', 'rotate-secrets'], ['--api-key KEY', '--grace DURATION']],
    [['merchants', 'set-display-name'], ['--api-key KEY', '--display-name TEXT', '--clear']],
    [['merchants', 'end-grace'], ['--api-key KEY']],
    [['withdrawals', 'create'], ['--api-key KEY', '--external-id ID', '--amount AMOUNT', '--blockchain Tron|Ethereum', '--destination-address ADDR', '--override-policy', '--reason TEXT']],
    [['withdrawals', 'set-status'], ['--uuid UUID', '--status DONE|FAILED', '--tx-id HASH', '--without-proof', '--reason TEXT']],
    [['withdrawals', 'list'], ['--stage awaiting_approval|queued|sent', '--status PENDING|DONE|FAILED', '--merchant MERCHANT_ID', '--blockchain Tron|Ethereum', '--limit N', '--json']],
    [['withdrawals', 'pending'], ['--blockchain Tron|Ethereum', '--in-flight-over DURATION', '--json']],
    [['withdrawals', 'claim'], ['--uuid UUID']],
    [['withdrawals', 'unclaim'], ['--uuid UUID']],
    [['withdrawals', 'record-tx'], ['--uuid UUID', '--tx-id HASH']],
    [['withdrawals', 'approve'], ['--uuid UUID']],
    [['withdrawals', 'reject'], ['--uuid UUID', '--reason TEXT']],
    [['merchants', 'set-withdrawals'], ['--api-key KEY', '--enabled', '--disabled', '--max-amount AMOUNT', '--daily-limit AMOUNT', '--allow-address ADDR', '--approve-above AMOUNT']],
    [['ledger', 'check'], ['--json']],
    [['callbacks', 'list'], ['--order UUID', '--withdrawal UUID', '--state', '--limit N']],
    [['callbacks', 'redeliver'], ['--webhook-id ID']],
    [['deposits', 'rescan'], ['--order UUID', '--from-block N']],
    [['chain', 'resume'], ['--blockchain Tron|Ethereum', '--from-block N']],
  ];
  const env = () => ({ DATA_DIR: freshDataDir() });

  it.each([[['--help']], [['-h']], [['help']]])('%j prints every command, exit 0', async (args) => {
    const { code, stdout, stderr } = await cli(args, env());
    expect(code).toBe(0);
    expect(stderr).toBe('');
    for (const [words] of COMMANDS) expect(stdout).toContain(words.join(' '));
    expect(stdout).toMatch(/exit codes: 0 done, 1 nothing found or refused, 64 usage error/);
  });

  for (const [words, flags] of COMMANDS) {
    it.each([[[...words, '--help']], [[...words, '-h']], [['help', ...words]]])(`%j lists its own flags and an example, exit 0`, async (args) => {
      const { code, stdout, stderr } = await cli(args, env());
      expect(code).toBe(0);
      expect(stderr).toBe('');
      expect(stdout).toContain(`partner-api ${words.join(' ')}:`);
      for (const flag of flags) expect(stdout).toContain(flag);
      expect(stdout).toMatch(new RegExp(`example:\\n  partner-api ${words.join(' ')} `));
    });

    it(`${words.join(' ')} --version prints the versions, exit 0`, async () => {
      const { code, stdout } = await cli([...words, '--version'], env());
      expect(code).toBe(0);
      expect(stdout).toMatch(/^partner-api \d+\.\d+\.\d+ \(contract \d+\.\d+\.\d+\)\n$/);
    });

    it(`${words.join(' ')} names an unknown flag as typed, in one line, exit 64`, async () => {
      const { code, stdout, stderr } = await cli([...words, '--nmae=x'], env());
      expect(code).toBe(64);
      expect(stdout).toBe('');
      expect(stderr).toBe(`partner-api: unknown flag --nmae (see partner-api ${words.join(' ')} --help)\n`);
    });
  }

  it('--version at the top, and the group help of merchants', async () => {
    // The shipped command: its version comes from the package.json beside dist/.
    const version = await command(['--version'], env());
    expect(version.code).toBe(0);
    expect(version.stdout).toBe(`partner-api ${JSON.parse(readFileSync('package.json', 'utf8')).version} (contract ${JSON.parse(readFileSync('generated/openapi.json', 'utf8')).info.version})\n`);
    const group = await cli(['merchants', '--help'], env());
    expect(group.code).toBe(0);
    expect(group.stdout).toContain('merchants create');
    expect(group.stdout).toContain('merchants rotate-secrets');
    expect(group.stdout).toContain('merchants end-grace');
  });

  it.each([[['--version']], [['serve', '--help']], [['serve', '--mode', 'staging']]])(
    'the shipped command %j loads neither the platform, its server nor a database driver',
    async (args) => {
      const modules = loadedModules(freshDataDir());
      await command(args, { ...env(), ...modules.env });
      const loaded = modules.loaded();
      expect(loaded.some((line) => /\/server\/cli\.(js|ts)$/.test(line))).toBe(true); // the hook saw the command load
      const heavy = loaded.filter((line) => /\/server\/(platform|process\/serve|http\/app)\.(js|ts)$|\/node_modules\/(fastify|pg|@electric-sql\/pglite|prom-client|ajv)\//.test(line));
      expect(heavy).toEqual([]);
    },
  );

  it.each([
    [[], 64],
    [['frobnicate'], 64],
    [['serve', '--mode', 'staging'], 78],
    [['serve', '--help'], 0],
  ])('the shipped command %j prints what runCli prints and exits with its code, %i', async (args, code) => {
    const inProcess = await cli(args, env());
    expect(inProcess.code).toBe(code);
    expect(await command(args, env())).toEqual(inProcess);
  });

  it.each([
    [['merchants', 'create', '--name'], 'partner-api: --name needs a value (see partner-api merchants create --help)'],
    [['merchants', 'create', 'shop'], 'partner-api: unexpected argument shop (see partner-api merchants create --help)'],
    [['merchants', 'create', '-x'], 'partner-api: unknown flag -x (see partner-api merchants create --help)'],
    [['merchants'], 'partner-api: merchants needs one of: create, set-display-name, rotate-secrets, end-grace, set-withdrawals (see partner-api merchants --help)'],
    // Not the group's help and exit 0 (issue 57 item 13).
    [['merchants', 'bogus', '--help'], 'partner-api: merchants has no command bogus: it has create, set-display-name, rotate-secrets, end-grace, set-withdrawals (see partner-api merchants --help)'],
    [['merchants', 'bogus', '--name', 'x'], 'partner-api: merchants has no command bogus: it has create, set-display-name, rotate-secrets, end-grace, set-withdrawals (see partner-api merchants --help)'],
    [['withdrawals', 'set-status', '--uuid', 'nope', '--status', 'DONE'], 'partner-api: --uuid must be a withdrawal uuid (see partner-api withdrawals set-status --help)'],
    [[], 'partner-api: a command is required (see partner-api --help)'],
  ])('usage error %j: one line, exit 64', async (args, line) => {
    const { code, stderr } = await cli(args, env());
    expect(code).toBe(64);
    expect(stderr).toBe(`${line}\n`);
  });

  it.each([
    [['withdrawals', 'set-status', '--uuid', '6f1c0000-0000-4000-8000-000000000000', '--status', 'DONE'], 'partner-api: no withdrawal 6f1c0000-0000-4000-8000-000000000000'],
    [['callbacks', 'redeliver', '--webhook-id', 'msg_none'], 'partner-api: no callback msg_none'],
    [['deposits', 'rescan', '--order', '6f1c0000-0000-4000-8000-000000000000'], 'partner-api: no order 6f1c0000-0000-4000-8000-000000000000'],
    [['merchants', 'rotate-secrets', '--api-key', 'pk_none'], 'partner-api: no merchant has the API key pk_none'],
  ])('nothing found %j: one line, exit 1', async (args, line) => {
    const { code, stdout, stderr } = await cli(args, { DATA_DIR: await sharedDataDir() });
    expect(code).toBe(1);
    expect(stdout).toBe('');
    expect(stderr).toBe(`${line}\n`);
  });

  it('a database it cannot reach, a bad setting: one line, no stack, SQL or driver text', async () => {
    // The shipped command: exits 69 and 78 through process.exit, its stderr as the operator sees it.
    const unreachable = await command(['merchants', 'create', '--name', 'X'], { ...env(), DATABASE_URL: 'postgres://nobody@127.0.0.1:9/none' });
    expect(unreachable.code).toBe(69);
    expect(unreachable.stderr).toBe('partner-api: cannot reach the database (ECONNREFUSED): check DATABASE_URL and that the server is up\n');
    const badSetting = await command(['callbacks', 'list', '--rate-limit', 'lots'], env());
    expect(badSetting.code).toBe(78);
    expect(badSetting.stderr.split('\n').filter(Boolean)).toHaveLength(1);
    for (const output of [unreachable.stderr, badSetting.stderr]) {
      expect(output).not.toMatch(/^\s+at /m);
      expect(output).not.toMatch(/SELECT|INSERT|UPDATE|SQLSTATE [0-9A-Z]{5}|duplicate key|violates/i);
    }
  });
});

describe('partner-api serve', () => {
  let server: Started;
  let dataDir: string;
  let baseUrl: string;
  let credentials: { apiKey: string; apiSecret: string; callbackSecret: string };
  let orderUuid: string;

  beforeAll(async () => {
    // A copy of the template: creating the database (9 CPU-s) is tested in data-directory.test.ts.
    dataDir = copiedDataDirectory('partner-cli-');
    dataDirs.push(dataDir);
    const platform = await startPartnerApi({ DATA_DIR: dataDir, LOG_LEVEL: 'info' });
    server = platform.process;
    baseUrl = platform.baseUrl;
    credentials = platform.sandbox!;
  });
  afterAll(() => server?.stop());

  it('prints the docs URL and sandbox credentials that work with the typed client', async () => {
    expect(server.output()).toContain(`docs:      ${baseUrl}/docs`);
    const client = createPartnerClient({ baseUrl, ...credentials });
    const { data, response } = await client.POST('/partner/v1/platforms/orders', {
      body: orderRequest('serve-1'),
    });
    expect(response.status).toBe(201);
    expect(data!.address).toBe('TUEZSdKsoDHQMeZwihtdoBiN46zxhGWYdH');
    // The sandbox merchant has a display name for payers, as a live merchant's page would (docs/decisions.md).
    expect(await (await fetch(data!.paymentUrl)).text()).toContain('Sandbox shop');
    // A deposit whose callback cannot be delivered (no such host here): its attempts are recorded.
    const body = '{"amount":1500000}';
    const path = `/sandbox/v1/orders/${data!.uuid}/deposits`;
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = await signRequest({ secret: credentials.apiSecret, timestamp, method: 'POST', target: path, body });
    const deposit = await fetch(baseUrl + path, {
      method: 'POST',
      body,
      headers: { 'Content-Type': 'application/json', 'X-Api-Key': credentials.apiKey, 'X-Timestamp': String(timestamp), 'X-Signature': signature },
    });
    expect(deposit.status).toBe(201);
    orderUuid = data!.uuid;
  });

  it('serves health, readiness, metrics, the contract and the docs', async () => {
    expect(await (await fetch(`${baseUrl}/healthz`)).json()).toEqual({ status: 'ok' });
    expect(await (await fetch(`${baseUrl}/readyz`)).json()).toEqual({ status: 'ready', database: 'pglite' });
    const metrics = await (await fetch(`${baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/partner_api_orders_created_total\{blockchain="Tron",outcome="created"\} 1/);
    expect(metrics).toMatch(/partner_api_http_request_duration_seconds_count\{method="POST",route="\/partner\/v1\/platforms\/orders",status="201"\} 1/);
    expect(await (await fetch(`${baseUrl}/openapi.json`)).text()).toBe(readFileSync('generated/openapi.json', 'utf8'));
    const docs = await fetch(`${baseUrl}/docs`); // npm test builds the docs before the tests
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await docs.text()).toContain('Partner API');
  });

  it("runs operator commands against the running platform's embedded database, with the same output and exit codes", async () => {
    // Issue 34 (1): they answered "is open in process N … stop it first"; the server runs them now.
    const created = await command(['merchants', 'create', '--name', 'Onboarded while running', '--json'], { DATA_DIR: dataDir });
    expect(created.code).toBe(0);
    const merchant = JSON.parse(created.stdout) as { apiKey: string; apiSecret: string; name: string };
    expect(merchant.name).toBe('Onboarded while running');
    // The new merchant works at once against the server that created it.
    const client = createPartnerClient({ baseUrl, apiKey: merchant.apiKey, apiSecret: merchant.apiSecret });
    expect((await client.POST('/partner/v1/platforms/orders', { body: orderRequest('onboarded-1') })).response.status).toBe(201);
    const exported = await command(['addresses', 'export', '--blockchain', 'Tron'], { DATA_DIR: dataDir });
    expect(exported.code).toBe(0);
    expect(exported.stdout.split('\r\n')[0]).toMatch(/^network,index,derivation_path,address/);
    expect(exported.stdout).toContain('Onboarded while running');
    // The withdrawal policy, set on the running platform, applies to its next request at once.
    const policy = await command(['merchants', 'set-withdrawals', '--api-key', merchant.apiKey, '--max-amount', '20', '--json'], { DATA_DIR: dataDir });
    expect(JSON.parse(policy.stdout)).toMatchObject({ maxAmount: '20' });
    const tooLarge = await client.POST('/partner/v1/platforms/withdrawals', {
      body: { externalId: 'policy-1', blockchain: 'Tron', currency: 'USDT', amount: 25, destinationAddress: SAMPLE_TRON_DESTINATION },
    });
    expect(tooLarge.error).toMatchObject({ code: 'validation_failed', errors: [{ pointer: '/amount', detail: 'is over your largest withdrawal, 20 USDT' }] });
    expect((await command(['ledger', 'check'], { DATA_DIR: dataDir })).stdout).toMatch(/the books agree/);
    // A refusal keeps its exit code and its one line.
    const refused = await command(['merchants', 'rotate-secrets', '--api-key', 'pk_test_nobody'], { DATA_DIR: dataDir });
    expect(refused).toMatchObject({ code: 1, stdout: '' });
    expect(refused.stderr).toMatch(/^partner-api: no merchant has the API key pk_test_nobody\n$/);
    // Only the data directory's owner reaches the socket, and it is gone once the server stops.
    expect(statSync(join(dataDir, 'operator.sock')).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o777).toBe(0o700);
  });

  it('writes JSON logs without keys, secrets or signatures', async () => {
    const logLines = server.output().split('\n').filter((line) => line.startsWith('{'));
    expect(logLines.length).toBeGreaterThan(3);
    for (const line of logLines) {
      JSON.parse(line);
      expect(line).not.toContain(credentials.apiSecret);
      expect(line).not.toContain(credentials.callbackSecret);
      expect(line).not.toContain(credentials.apiKey);
      expect(line).not.toMatch(/[0-9a-f]{64}/);
    }
  });

  it('finishes an in-flight request on SIGTERM, then exits cleanly and releases the database', async () => {
    const body = JSON.stringify(orderRequest('in-flight', { blockchain: 'Ethereum' }));
    const timestamp = Math.floor(Date.now() / 1000);
    const signature = await signRequest({ secret: credentials.apiSecret, timestamp, method: 'POST', target: '/partner/v1/platforms/orders', body });
    const url = new URL(`${baseUrl}/partner/v1/platforms/orders`);
    const responded = new Promise<number>((resolve, reject) => {
      const req = httpRequest(url, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), 'X-Api-Key': credentials.apiKey, 'X-Timestamp': timestamp, 'X-Signature': signature },
      }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.write(body.slice(0, 20)); // the request is in flight, its body half sent
      setTimeout(() => {
        server.process.kill('SIGTERM');
        setTimeout(() => req.end(body.slice(20)), 500);
      }, 200);
    });
    const exited = new Promise<number | null>((resolve) => server.process.once('exit', (code) => resolve(code)));
    expect(await responded).toBe(201);
    expect(await exited).toBe(0);
    expect(existsSync(join(dataDir, 'operator.sock'))).toBe(false);
    const reopened = await cli(['merchants', 'create', '--name', 'after', '--json'], { DATA_DIR: dataDir });
    expect(reopened.code).toBe(0);
  });

  it('lists the callback with its attempts after the server stopped, and queues it again', async () => {
    const listed = await cli(['callbacks', 'list', '--order', orderUuid, '--json'], { DATA_DIR: dataDir });
    expect(listed.code).toBe(0);
    const [event] = JSON.parse(listed.stdout) as { webhookId: string; event: string; state: string; attempts: { statusCode: number | null; error: string | null; latencyMs: number }[] }[];
    expect(event).toMatchObject({ event: 'order.deposit', state: 'pending' });
    expect(event!.attempts.length).toBeGreaterThanOrEqual(1);
    expect(event!.attempts[0]).toMatchObject({ statusCode: null, error: expect.stringMatching(/merchant\.example/) });
    // Times in the API's date shape, UTC, as the merchants' deliveries show them (issue 49).
    const shape = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;
    const times = event as unknown as { createdAt: string; nextAttemptAt: string; deliveredAt: null; attempts: { at: string }[] };
    expect([times.createdAt, times.nextAttemptAt, times.attempts[0]!.at]).toEqual([expect.stringMatching(shape), expect.stringMatching(shape), expect.stringMatching(shape)]);
    expect(times.deliveredAt).toBeNull();
    const text = await cli(['callbacks', 'list', '--state', 'pending'], { DATA_DIR: dataDir });
    expect(text.stdout).toContain(event!.webhookId);
    const again = await cli(['callbacks', 'redeliver', '--webhook-id', event!.webhookId, '--json'], { DATA_DIR: dataDir });
    expect(JSON.parse(again.stdout)).toMatchObject({ webhookId: event!.webhookId, state: 'pending' });
    const unknown = await cli(['callbacks', 'redeliver', '--webhook-id', 'msg_nope'], { DATA_DIR: dataDir });
    expect(unknown.stderr).toMatch(/no callback msg_nope/);
  });
});
