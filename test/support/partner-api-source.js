// The `partner-api` command from its TypeScript sources, for tests and benchmarks: no build needed.
// (bin/partner-api.js runs the compiled build that ships; test/package/platform-package.test.ts tests that.)
import { register } from 'tsx/esm/api';

register();
(await import('../../src/server/cli.ts')).main();
