// The order in which vitest starts the test files. With five files at once on two cores, a long file
// that starts last ends the run alone; vitest puts the longest first only from the durations it
// cached on an earlier run, and a fresh clone (CI) has none. So the files that took longest on this
// machine start first, the longest first (measured with `npm test`; a stale list only costs minutes),
// and the others follow in vitest's own order.
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const LONGEST_FIRST = [
  'test/scripts/fresh-clone-start.test.ts',
  'test/server/cli/cli.test.ts',
  'test/package/merchant-from-docs.test.ts',
  'test/package/typescript-samples-from-docs.test.ts',
  'test/server/chain/chain-faults-e2e.test.ts',
  'test/server/chain/chain-e2e.test.ts',
  'test/server/payment-page/page.test.ts',
  'test/docs/docs.test.ts',
  'test/package/platform-package.test.ts',
  'test/server/db/data-directory.test.ts',
  'test/server/process/crash-safety.test.ts',
  'test/server/http/bad-input.test.ts',
  'test/server/process/quiet-start.test.ts',
  'test/server/process/durability.test.ts',
  'test/server/addresses/index-gaps.test.ts',
  'test/server/cli/refusals.test.ts',
  'test/server/addresses/pool.test.ts',
  'test/server/orders/orders.test.ts',
  'test/package/client-package.test.ts',
];

export class LongestFirstSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (file: TestSpecification) => {
      const index = LONGEST_FIRST.findIndex((path) => file.moduleId.endsWith(`/${path}`));
      return index === -1 ? LONGEST_FIRST.length : index;
    };
    // Array.prototype.sort is stable: the files not listed keep vitest's order.
    return (await super.sort(files)).sort((a, b) => rank(a) - rank(b));
  }
}
