// docs/operating.md's withdrawals as an operator reads them (issue 54): every withdrawal command in its
// Commands block with each of its flags, and the hand payment's recipe (Paying out, By hand) run verbatim
// with bash, `partner-api` being the shipped command, against a sandbox's embedded database.
// test/server/payouts/hand-payment-instances.test.ts runs the same recipe on a live platform on anvil.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COMMANDS } from '../../src/server/cli/commands.js';
import { readConfig } from '../../src/server/config.js';
import { sandboxDeposit } from '../../src/server/orders/sandbox-deposits.js';
import { openPlatform } from '../../src/server/platform.js';
import { orderRequest, SAMPLE_ETHEREUM_DESTINATION } from '../fixtures/orders.js';
import { runCommand as cli } from '../support/cli.js';
import { copiedDataDirectory } from '../support/database-templates.js';
import { operating, recipeBlocks, runBlock } from './operating-blocks.js';

describe("docs/operating.md's withdrawal commands", () => {
  const block = /## Commands\n\n```sh\n([\s\S]*?)```/.exec(operating)![1]!;
  for (const command of COMMANDS.filter((c) => c.words[0] === 'withdrawals')) {
    it(`lists ${command.words.join(' ')} with each of its flags`, () => {
      const line = block.split('\n').find((l) => l.startsWith(`partner-api ${command.words.join(' ')} `));
      expect(line, command.words.join(' ')).toBeDefined();
      for (const flag of Object.keys(command.flags)) expect(line).toContain(`--${flag}`);
    });
  }
});

describe("docs/operating.md's hand payment, run verbatim", { timeout: 240_000 }, () => {
  // A node nobody answers at, on loopback: record-tx needs one configured, and sends nothing to it.
  let env: Record<string, string>;
  let apiKey: string;
  beforeAll(async () => {
    env = { DATA_DIR: copiedDataDirectory('partner-docs-hand-'), ETHEREUM_RPC_URL: 'http://127.0.0.1:9', LOG_LEVEL: 'silent' };
    const merchant = JSON.parse((await cli(['merchants', 'create', '--name', 'Docs', '--json'], env)).stdout) as { apiKey: string; merchantId: string };
    apiKey = merchant.apiKey;
    const platform = await openPlatform(readConfig(env), { logger: false });
    try {
      const created = await platform.orders.create(merchant.merchantId, orderRequest('docs-fund', { blockchain: 'Ethereum' }));
      if (created.outcome !== 'created') throw new Error(created.outcome);
      await sandboxDeposit(platform.db, { merchantId: merchant.merchantId, orderUuid: created.order.uuid, amount: 100_000_000n, seed: 'docs', now: new Date(), watchWindowSeconds: 60 });
    } finally {
      await platform.close();
    }
  }, 120_000);
  afterAll(() => rmSync(env.DATA_DIR!, { recursive: true, force: true }));

  it('has the recipe: claim, pay, record-tx', () => {
    const blocks = recipeBlocks(operating, 'By hand');
    expect(blocks).toHaveLength(2);
    expect(blocks[0]).toMatch(/withdrawals claim --uuid "\$UUID"/);
    expect(blocks[1]).toMatch(/withdrawals record-tx --uuid "\$UUID" --tx-id "\$TX"/);
  });

  it('claims the withdrawal, then records its payment: sent with the txId, still claimed', async () => {
    const made = await cli(['withdrawals', 'create', '--api-key', apiKey, '--external-id', 'docs-1', '--amount', '25', '--blockchain', 'Ethereum', '--destination-address', SAMPLE_ETHEREUM_DESTINATION, '--json'], env);
    const { uuid } = JSON.parse(made.stdout) as { uuid: string };
    const [claimBlock, recordBlock] = recipeBlocks(operating, 'By hand');
    const first = await runBlock(claimBlock!, { ...env, UUID: uuid });
    const [header, row] = first.split('\r\n');
    expect(header).toMatch(/^uuid,network,destinationAddress,amount,.*,awaits,/);
    expect(row).toMatch(new RegExp(`^${uuid},Ethereum,${SAMPLE_ETHEREUM_DESTINATION},25,.*,queued,payment,`));
    expect(first).toContain(`withdrawal ${uuid} is claimed for hand payment: no payer pays it`);

    const tx = `0x${randomBytes(32).toString('hex')}`;
    const second = await runBlock(recordBlock!, { ...env, UUID: uuid, TX: tx });
    expect(second).toContain(`withdrawal ${uuid} is sent: DONE once the chain confirms that ${tx} pays exactly 25 USDT to ${SAMPLE_ETHEREUM_DESTINATION}`);
    const listed = JSON.parse(second.slice(second.indexOf('\n') + 1)) as { uuid: string; stage: string; txId: string; claimedAt: string | null }[];
    expect(listed).toEqual([expect.objectContaining({ uuid, stage: 'sent', txId: tx, claimedAt: expect.stringMatching(/^\d{4}-/) })]);
  });
});
