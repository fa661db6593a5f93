// `partner-api ledger check`: the books recomputed from their entries, and what no round follows.
import { checkLedger } from '../ledger/ledger.js';
import { inFlightWithoutLiveTransaction } from '../payouts/payout-store.js';
import { settledWithoutProof } from '../withdrawals/payout-queue.js';
import { RefusedError } from './errors.js';
import { JSON_FLAG, print, withPlatform, type Command } from './command.js';

export const LEDGER_COMMANDS: Command[] = [
  {
    words: ['ledger', 'check'],
    summary: "recomputes every merchant's balance from the ledger's entries and checks every deposit and withdrawal against them (exit 1 on a difference)",
    flags: { json: JSON_FLAG },
    example: 'partner-api ledger check --json',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const result = await withPlatform(io, config, async (p) => ({
        ...(await checkLedger(p.db)),
        withoutProof: await settledWithoutProof(p.db),
        outWithoutTransaction: await inFlightWithoutLiveTransaction(p.db),
      }));
      const text = [
        `${result.entries} entries, ${result.balances} balances: ${result.problems.length === 0 ? 'the books agree' : `${result.problems.length} difference(s)`}`,
        ...result.problems,
        // A payout out that no round follows: its hold would never end. Never made by the payers (a move and its marks are one transaction).
        ...(result.outWithoutTransaction.length ? [`${result.outWithoutTransaction.length} withdrawal(s) sent with no transaction that may still be mined, for the operator: ${result.outWithoutTransaction.join(', ')}`] : []),
        ...(result.unbooked.length ? [`${result.unbooked.length} withdrawal(s) from before the books, outside them: ${result.unbooked.join(', ')}`] : []),
        ...(result.withoutProof.length ? [`${result.withoutProof.length} withdrawal(s) DONE on the operator's word, no chain's proof: ${result.withoutProof.join(', ')}`] : []),
      ].join('\n');
      print(io, flags, result, text);
      if (result.problems.length > 0) throw new RefusedError(`the books disagree in ${result.problems.length} place(s)`);
      if (result.outWithoutTransaction.length > 0) throw new RefusedError(`${result.outWithoutTransaction.length} withdrawal(s) out with no live transaction`);
    },
  },
];
