// The client as a merchant's service gets it: `npm pack ./dist/client`, installed through npm into an
// empty project, then used from plain `node` (ESM and CommonJS) against a real platform that verifies
// every signature, and type-checked by a strict TypeScript consumer (NodeNext and Bundler).
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_ORDER, sampleOf } from '../support/code-samples.js';
import { payingOutBlock } from '../support/guide.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';
import { installedPackages, installInEmptyProject, NODE, pack, plainEnv, removeAll, ROOT, run, tarballFiles } from '../support/packages.js';

const TSC = join(ROOT, 'node_modules/typescript/bin/tsc');
const contractVersion = JSON.parse(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8')).info.version as string;

let tarball: string;
let project: string;
let platform: TestPlatform;

beforeAll(async () => {
  tarball = await pack(join(ROOT, 'dist/client'));
  project = await installInEmptyProject(tarball, { type: 'module' });
  startTypeChecks();
  platform = await startTestPlatform('pglite');
}, 180_000);

afterAll(async () => {
  await platform?.close();
  removeAll(project, dirname(tarball));
});

/** Environment of the consumer programs: where the platform is, and the merchant's credentials. */
function consumerEnv(externalId: string) {
  return plainEnv({
    PARTNER_API_URL: platform.baseUrl,
    PARTNER_API_KEY: platform.merchant.apiKey,
    PARTNER_API_SECRET: platform.merchant.apiSecret,
    EXTERNAL_ID: externalId,
  });
}

// Creates an order, reads it back and prints both as JSON; a refused signature would be a 401 problem.
const CREATE_AND_READ = `
  const partner = createPartnerClient({
    baseUrl: process.env.PARTNER_API_URL,
    apiKey: process.env.PARTNER_API_KEY,
    apiSecret: process.env.PARTNER_API_SECRET,
  });
  const created = await partner.POST('/partner/v1/platforms/orders', {
    body: { externalId: process.env.EXTERNAL_ID, blockchain: 'Tron', currency: 'USDT', customerId: 'cust-42',
            callbackUrl: 'https://merchant.example/callbacks/deposits' },
  });
  if (created.error) throw new Error('create: ' + JSON.stringify(created.error));
  const read = await partner.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: created.data.uuid } } });
  if (read.error) throw new Error('read: ' + JSON.stringify(read.error));
  console.log(JSON.stringify({ status: created.response.status, created: created.data, read: read.data }));
`;

async function expectCreatedAndRead(file: string, externalId: string) {
  const ran = await run(NODE, [file], { cwd: project, env: consumerEnv(externalId) });
  expect(ran.stderr).toBe('');
  expect(ran.code).toBe(0);
  const result = JSON.parse(ran.stdout);
  expect(result.status).toBe(201);
  expect(result.read.uuid).toBe(result.created.uuid);
  expect(result.created.customerId).toBe('cust-42');
  expect(result.read.customerId).toBe('cust-42');
  expect(result.read.address).toBe(result.created.address);
  expect(result.read.status).toBe('NEW');
}

const MODULE_RESOLUTIONS = ['NodeNext', 'Bundler'] as const;
type ModuleResolution = (typeof MODULE_RESOLUTIONS)[number];

/** A tsc run's diagnostics by the file they are in ('' for one in no file, such as a bad option), its exit code. */
interface TypeCheck {
  code: number;
  stderr: string;
  diagnostics: Map<string, string[]>;
}

let typeChecks: Record<ModuleResolution, Promise<TypeCheck>>;

/**
 * The strict TypeScript consumer's checks: one tsc program per module resolution, holding the typed
 * consumer, the wrong one and, under NodeNext, the docs' samples. Each program spends most of its CPU on
 * the libraries every file shares, so two runs cost what two of the five separate ones did; every file is
 * a module, so one file's errors cannot hide or cause another's, and each test reads its own files'
 * diagnostics. Started in beforeAll, beside the platform's start.
 */
function startTypeChecks() {
  for (const moduleResolution of MODULE_RESOLUTIONS) {
    const dir = join(project, `ts-${moduleResolution}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'consumer.ts'), TYPED_CONSUMER);
    writeFileSync(join(dir, 'wrong.ts'), WRONG_CONSUMER);
  }
  const samples = join(project, 'samples');
  mkdirSync(samples, { recursive: true });
  // The samples read process.env; the consumer has no @types/node, so declare just that.
  writeFileSync(join(samples, 'env.d.ts'), 'declare const process: { env: Record<string, string | undefined> };\n');
  for (const operationId of SAMPLE_ORDER) writeFileSync(join(samples, `${operationId}.ts`), sampleOf(operationId, 'TypeScript'));
  writeFileSync(join(samples, 'payingOut.ts'), payingOutBlock('ts').code);

  const check = async (moduleResolution: ModuleResolution, files: string[]): Promise<TypeCheck> => {
    const compilerOptions = {
      strict: true,
      noEmit: true,
      target: 'ES2022',
      lib: ['ES2022', 'DOM'],
      types: [],
      module: moduleResolution === 'NodeNext' ? 'NodeNext' : 'ESNext',
      moduleResolution,
      skipLibCheck: false, // the package's .d.ts files are checked
      skipDefaultLibCheck: true, // TypeScript's own lib files are TypeScript's to check: a third of each run
      pretty: false,
    };
    const config = join(project, `tsconfig.${moduleResolution}.json`);
    writeFileSync(config, JSON.stringify({ compilerOptions, files }));
    const ran = await run(NODE, [TSC, '-p', config], { cwd: project });
    return { code: ran.code, stderr: ran.stderr, diagnostics: diagnosticsByFile(ran.stdout) };
  };
  const sampleFiles = ['samples/env.d.ts', 'samples/payingOut.ts', ...SAMPLE_ORDER.map((operationId) => `samples/${operationId}.ts`)];
  typeChecks = {
    NodeNext: check('NodeNext', ['ts-NodeNext/consumer.ts', 'ts-NodeNext/wrong.ts', ...sampleFiles]),
    Bundler: check('Bundler', ['ts-Bundler/consumer.ts', 'ts-Bundler/wrong.ts']),
  };
}

/** tsc's output (not pretty) by file: a diagnostic starts a line with `file(line,column): `, its details are indented. */
function diagnosticsByFile(output: string): Map<string, string[]> {
  const byFile = new Map<string, string[]>();
  let file = '';
  for (const line of output.split('\n').filter(Boolean)) {
    if (!line.startsWith(' ')) file = /^(.+?)\(\d+,\d+\): /.exec(line)?.[1] ?? '';
    byFile.set(file, [...(byFile.get(file) ?? []), line]);
  }
  return byFile;
}

describe('the client package (partner-api-client)', () => {
  it('is a small tarball of the built client and nothing else, of the size and files docs/packages.md states', async () => {
    const stated = /\(about (\d+) kB, (\d+) files[:)]/.exec(readFileSync(join(ROOT, 'docs/packages.md'), 'utf8'));
    expect(stated, 'docs/packages.md states "(about N kB, M files)"').not.toBeNull();
    const size = statSync(tarball).size;
    expect(Math.abs(size / 1000 - Number(stated![1])) / Number(stated![1]), `packed: ${(size / 1000).toFixed(1)} kB, stated: about ${stated![1]} kB`).toBeLessThanOrEqual(0.1);
    const files = await tarballFiles(tarball);
    expect(files).toHaveLength(Number(stated![2]));
    // The docs carry this same tarball (npm pack's are reproducible): the page's "Download the client".
    expect(readFileSync(join(ROOT, 'dist/docs/partner-api-client.tgz')).equals(readFileSync(tarball))).toBe(true);
    expect(files.sort()).toEqual(['LICENSE', 'README.md', 'index.cjs', 'index.d.cts', 'index.d.ts', 'index.js', 'openapi.json', 'package.json']);
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/partner-api-client/package.json'), 'utf8'));
    expect(manifest.name).toBe('partner-api-client');
    expect(manifest.version).toBe(contractVersion);
    expect(Object.keys(manifest.dependencies)).toEqual(['openapi-fetch']);
    expect(manifest.exports['.'].import.types).toBe('./index.d.ts');
    expect(manifest.exports['.'].require.types).toBe('./index.d.cts');
  });

  it("ships the contract as partner-api-client/openapi.json: the docs' download and the platform's /openapi.json, one version", async () => {
    const resolve = await run(NODE, ['--input-type=module', '-e', "console.log(import.meta.resolve('partner-api-client/openapi.json'))"], { cwd: project });
    expect(resolve.stderr).toBe('');
    const shipped = readFileSync(new URL(resolve.stdout.trim()), 'utf8');
    const required = await run(NODE, ['-e', "console.log(require('partner-api-client/openapi.json').info.version)"], { cwd: project });
    expect(required.stdout.trim()).toBe(contractVersion);

    expect(shipped).toBe(readFileSync(join(ROOT, 'generated/openapi.json'), 'utf8'));
    expect(shipped).toBe(readFileSync(join(ROOT, 'dist/docs/openapi.json'), 'utf8')); // the docs page's download link
    const served = await fetch(`${platform.baseUrl}/openapi.json`);
    expect(served.status).toBe(200);
    expect(await served.text()).toBe(shipped);
    // The docs' link is relative: served at /docs, it fetches this same /openapi.json.
    expect(new URL('openapi.json', `${platform.baseUrl}/docs`).href).toBe(`${platform.baseUrl}/openapi.json`);

    const manifest = JSON.parse(readFileSync(join(project, 'node_modules/partner-api-client/package.json'), 'utf8'));
    expect(JSON.parse(shipped).info.version).toBe(manifest.version);
  });

  it('installs openapi-fetch and its own dependency, nothing more', () => {
    const installed = installedPackages(join(project, 'node_modules')).sort();
    expect(installed).toEqual(['openapi-fetch', 'openapi-typescript-helpers', 'partner-api-client']);
  });

  it('runs from an .mjs file with plain node: a signed create and read that the platform verifies', async () => {
    writeFileSync(join(project, 'consumer.mjs'), `import { createPartnerClient } from 'partner-api-client';\n${CREATE_AND_READ}`);
    await expectCreatedAndRead('consumer.mjs', 'pkg-esm-1');
  });

  it('runs from a .cjs file with require()', async () => {
    writeFileSync(
      join(project, 'consumer.cjs'),
      `const { createPartnerClient } = require('partner-api-client');\n(async () => {${CREATE_AND_READ}})().catch((e) => { console.error(e); process.exit(1); });`,
    );
    await expectCreatedAndRead('consumer.cjs', 'pkg-cjs-1');
  });

  it('signs what the platform refuses when the secret is wrong (the check is real)', async () => {
    writeFileSync(join(project, 'consumer.mjs'), `import { createPartnerClient } from 'partner-api-client';\n${CREATE_AND_READ}`);
    const env = { ...consumerEnv('pkg-bad-secret'), PARTNER_API_SECRET: 'sk_test_not_the_secret' };
    const ran = await run(NODE, ['consumer.mjs'], { cwd: project, env });
    expect(ran.code).not.toBe(0);
    expect(ran.stderr).toContain('invalid_signature');
  });

  it('verifies a callback signed for tests, from CommonJS too', async () => {
    writeFileSync(
      join(project, 'callback.cjs'),
      `const { verifyCallback, signTestCallback, CallbackVerificationError } = require('partner-api-client');
       (async () => {
         const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
         const body = JSON.stringify({ event: 'order.expired', uuid: '0b9a6f1e-3c2d-4e5f-8a7b-6c5d4e3f2a1b' });
         const headers = await signTestCallback(body, secret);
         const event = await verifyCallback(body, headers, secret);
         let reason = '';
         try { await verifyCallback(body + ' ', headers, secret); } catch (e) { reason = e instanceof CallbackVerificationError ? e.reason : 'other'; }
         console.log(event.event + ' ' + reason);
       })();`,
    );
    const ran = await run(NODE, ['callback.cjs'], { cwd: project });
    expect(ran.stdout.trim()).toBe('order.expired invalid_signature');
  });

  for (const moduleResolution of MODULE_RESOLUTIONS) {
    it(`type-checks a strict TypeScript consumer under "moduleResolution": "${moduleResolution}"`, async () => {
      const checked = await typeChecks[moduleResolution];
      expect(checked.stderr).toBe('');
      // The typed consumer passes, and so does every other file (the package's .d.ts, the samples): the
      // wrong consumer's errors are the only ones.
      expect(checked.diagnostics.get(`ts-${moduleResolution}/consumer.ts`)).toBeUndefined();
      expect([...checked.diagnostics.keys()]).toEqual([`ts-${moduleResolution}/wrong.ts`]);
      // The types are real: a wrong network and a wrong field type are errors, not `any`.
      const wrong = checked.diagnostics.get(`ts-${moduleResolution}/wrong.ts`)!.join('\n');
      expect(checked.code).not.toBe(0);
      expect(wrong).toContain('"Bitcoin"');
      expect(wrong).toMatch(/wrong\.ts\(8,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
    }, 120_000); // tsc on a loaded 2-core machine takes 20 to 30 s
  }

  it("type-checks the docs' TypeScript samples under NodeNext (test/package/typescript-samples-from-docs.test.ts runs them)", async () => {
    const typecheck = await typeChecks.NodeNext;
    expect(typecheck.stderr).toBe('');
    expect([...typecheck.diagnostics.keys()].filter((file) => !file.startsWith('ts-NodeNext/'))).toEqual([]);
  }, 120_000);

  it('passes publint and Are The Types Wrong', async () => {
    const publint = await run(NODE, [join(ROOT, 'node_modules/publint/src/cli.js'), '--strict', join(ROOT, 'dist/client')]);
    expect(publint.code, publint.stdout + publint.stderr).toBe(0);
    expect(publint.stdout).toContain('All good');
    const attw = await run(NODE, [join(ROOT, 'node_modules/@arethetypeswrong/cli/dist/index.js'), tarball, '--format', 'json']);
    expect(attw.code, attw.stdout + attw.stderr).toBe(0);
    const report = JSON.parse(attw.stdout);
    expect(report.analysis.problems ?? []).toEqual([]);
  });
});

const TYPED_CONSUMER = `
import { createPartnerClient, verifyCallback, CallbackVerificationError, PartnerClientConfigError } from 'partner-api-client';
import type { CreateDepositOrderRequest, DepositOrder, DepositOrderCallback, Problem, Withdrawal } from 'partner-api-client';

const partner = createPartnerClient({ baseUrl: 'https://sandbox.partner-platform.test', apiKey: 'pk', apiSecret: 'sk' });

export async function createOrder(request: CreateDepositOrderRequest): Promise<DepositOrder> {
  const { data, error } = await partner.POST('/partner/v1/platforms/orders', { body: request });
  if (error) throw new Error(explain(error));
  const read = await partner.GET('/partner/v2/platforms/orders/{uuid}', { params: { path: { uuid: data.uuid } } });
  if (read.error) throw new Error(explain(read.error));
  const received: number = read.data.receivedAmount;
  return { ...read.data, receivedAmount: received };
}

export async function withdrawal(uuid: string): Promise<Withdrawal | undefined> {
  const { data } = await partner.GET('/partner/v1/platforms/withdrawals/{uuid}', { params: { path: { uuid } } });
  return data;
}

export function explain(problem: Problem): string {
  switch (problem.code) {
    case 'validation_failed': return (problem.errors ?? []).map((e) => \`\${e.pointer}: \${e.detail}\`).join('; ');
    case 'timestamp_out_of_window': return \`fix the clock: the server's time is \${problem.serverTime}\`;
    default: return \`\${problem.status} \${problem.code}: \${problem.detail ?? problem.title}\`;
  }
}

export async function onCallback(rawBody: string, headers: Headers, secret: string): Promise<DepositOrderCallback | string> {
  try {
    return await verifyCallback(rawBody, headers, secret);
  } catch (err) {
    if (err instanceof CallbackVerificationError) return err.reason;
    if (err instanceof PartnerClientConfigError) return err.message;
    throw err;
  }
}
`;

const WRONG_CONSUMER = `
import { createPartnerClient, type DepositOrder } from 'partner-api-client';

const partner = createPartnerClient({ baseUrl: 'https://sandbox.partner-platform.test', apiKey: 'pk', apiSecret: 'sk' });
export const created = partner.POST('/partner/v1/platforms/orders', {
  body: { externalId: 'x', blockchain: 'Bitcoin', currency: 'USDT', callbackUrl: 'https://merchant.example/cb' },
});
export const amount = (order: DepositOrder): number => order.address;
`;
