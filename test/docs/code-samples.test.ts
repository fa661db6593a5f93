// Every operation of the docs shows a curl + openssl sample and a TypeScript sample; each curl sample runs
// verbatim (bash, as the docs show it) against a real sandbox platform that verifies its signature.
// The TypeScript samples run in test/package/client-package.test.ts, where the client is installed.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SAMPLE_ORDER, sampledOperations, sampleOf } from '../support/code-samples.js';
import { startTestPlatform, type TestPlatform } from '../support/platform.js';

let platform: TestPlatform;
const ids: Record<string, string> = {};

beforeAll(async () => {
  platform = await startTestPlatform('pglite');
});
afterAll(async () => platform?.close());

async function runShell(source: string): Promise<unknown> {
  const env = {
    PATH: process.env.PATH,
    PARTNER_API_URL: platform.baseUrl,
    PARTNER_API_KEY: platform.merchant.apiKey,
    PARTNER_API_SECRET: platform.merchant.apiSecret,
    ...ids,
  };
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', source], { env });
  return JSON.parse(stdout);
}

describe('the code samples of the docs', () => {
  it('cover every operation, in curl with openssl and in TypeScript with partner-api-client', () => {
    const operations = sampledOperations();
    expect(operations.map((o) => o.operationId).sort()).toEqual([...SAMPLE_ORDER].sort());
    for (const operation of operations) {
      expect(operation.samples.map((s) => s.lang)).toEqual(['Shell', 'TypeScript']);
      const [shell, typescript] = operation.samples;
      expect(shell!.source).toContain('openssl dgst -sha256 -hmac');
      expect(shell!.source).toContain(`${operation.method.toUpperCase()} "$TARGET"`);
      expect(typescript!.source).toContain("from 'partner-api-client'");
      expect(typescript!.source).toContain(`partner.${operation.method.toUpperCase()}('${operation.path}'`);
    }
  });

  it('come with the command that installs the client, in the guide', () => {
    const contract = JSON.parse(readFileSync(new URL('../../generated/openapi.json', import.meta.url), 'utf8'));
    expect(contract.info.description).toContain('```sh\nnpm install partner-api-client\n```');
  });

  it('run verbatim with bash against the sandbox, each answered as documented', async () => {
    const order = (await runShell(sampleOf('createDepositOrder', 'Shell'))) as { uuid: string; blockchain: string; address: string };
    expect(order).toMatchObject({ blockchain: 'Tron', status: 'NEW' });
    ids.ORDER_UUID = order.uuid;

    expect(await runShell(sampleOf('getDepositOrder', 'Shell'))).toMatchObject({ uuid: order.uuid, address: order.address, receivedAmount: 0 });
    expect(await runShell(sampleOf('simulateSandboxDeposit', 'Shell'))).toMatchObject({ uuid: order.uuid, receivedAmount: 2500000, status: 'DONE' });

    const withdrawal = (await runShell(sampleOf('createSandboxWithdrawal', 'Shell'))) as { uuid: string };
    expect(withdrawal).toMatchObject({ externalId: 'wd-1001', amount: 12.5, status: 'PENDING' });
    ids.WITHDRAWAL_UUID = withdrawal.uuid;
    expect(await runShell(sampleOf('getWithdrawal', 'Shell'))).toMatchObject({ uuid: withdrawal.uuid, status: 'PENDING' });
    expect(await runShell(sampleOf('setSandboxWithdrawalStatus', 'Shell'))).toMatchObject({ uuid: withdrawal.uuid, status: 'DONE' });
  });

  it('fail loudly when the signature is wrong (the samples really sign)', async () => {
    const source = sampleOf('getDepositOrder', 'Shell').replace('"$PARTNER_API_SECRET"', '"not-the-secret"');
    const failure = (await runShell(source).catch((error: unknown) => error)) as { code?: number; stdout?: string };
    expect(failure.code).toBe(22); // curl --fail-with-body: an HTTP error, with the problem printed
    expect(JSON.parse(failure.stdout!)).toMatchObject({ status: 401, code: 'invalid_signature' });
  });
});
