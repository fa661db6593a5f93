// The guide's "Paying out" (openapi/guide/withdrawals.md): its shell and Python flows run verbatim against
// a sandbox platform whose jobs run as `npm start` runs them, each reading the balance and the terms,
// asking for a withdrawal and waiting for it to settle by itself with a txId, or asking for none when
// the amount is outside the terms. The TypeScript flow runs where the
// client package is installed (test/package/client-package.test.ts).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { changePolicy } from '../../src/server/withdrawals/policy.js';
import { payingOutBlock } from '../support/guide.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

let t: TestPlatform;
beforeAll(async () => {
  t = await startTestPlatform('pglite', { env: { SANDBOX_WITHDRAWAL_SECONDS: '1' } });
  await t.platform.startJobs();
  // As the guide says: fund the balance first (the sandbox's deposit helper, here through the platform).
  await t.fund('Tron', 20_000_000n);
});
afterAll(() => t?.close());

const env = () => ({ PATH: process.env.PATH, PARTNER_API_URL: t.baseUrl, PARTNER_API_KEY: t.merchant.apiKey, PARTNER_API_SECRET: t.merchant.apiSecret });

describe("the guide's Paying out", () => {
  it('shows the flow in curl, TypeScript and Python', () => {
    expect(['sh', 'ts', 'python'].map((lang) => payingOutBlock(lang).lang)).toEqual(['sh', 'ts', 'python']);
  });

  it('runs verbatim with bash: the balance, the terms, a withdrawal, DONE with its txId', async () => {
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', payingOutBlock('sh').code], { env: env(), timeout: 60_000 });
    const [balance, terms, settled] = stdout.trim().split('\n').map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(balance).toMatchObject({ blockchain: 'Tron', available: 20_000_000 });
    expect(terms).toEqual({ enabled: true, fee: 1, minimum: 1, maximum: null, dailyLeft: null });
    expect(settled).toEqual({ status: 'DONE', txId: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it('asks for no withdrawal, in each language, when the amount is outside the terms', async () => {
    await changePolicy(t.db, t.merchant.merchantId, { maxAmount: 4_999_999n });
    try {
      const before = await t.count('withdrawals');
      const shell = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', payingOutBlock('sh').code], { env: env(), timeout: 60_000 }).catch((error: { code?: number }) => error);
      expect((shell as { code?: number }).code).toBe(1); // jq -e: the check is false
      const python = await promisify(execFile)('python3', ['-I', '-c', payingOutBlock('python').code], { env: env(), timeout: 60_000 }).catch((error: { stderr?: string }) => error);
      expect((python as { stderr?: string }).stderr).toContain('5 USDT is outside the terms on Tron');
      expect(await t.count('withdrawals')).toBe(before);
    } finally {
      await changePolicy(t.db, t.merchant.merchantId, { maxAmount: null });
    }
  });

  it('runs verbatim with python3: the balance, the terms, a withdrawal, DONE with its txId', async () => {
    const { stdout } = await promisify(execFile)('python3', ['-I', '-c', payingOutBlock('python').code], { env: env(), timeout: 60_000 });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^available \d+$/);
    expect(lines[1]).toBe('terms 1 1 None None');
    expect(lines[2]).toMatch(/^DONE [0-9a-f]{64}$/);
    const balances = await t.client().GET('/partner/v1/platforms/balances');
    // Two withdrawals of 5 USDT and 1 fee each (the shell's, then Python's).
    expect(balances.data!.data[0]).toMatchObject({ available: 8_000_000, withdrawn: 12_000_000, held: 0 });
  });
});
