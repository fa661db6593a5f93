#!/usr/bin/env node
// The `partner-api` command: the compiled platform (npm run build writes dist/; the published package ships it).
import module from 'node:module';

// Node 22.1 and later keep the platform's compiled JavaScript between starts (Node 20 has no such cache).
module.enableCompileCache?.();
let cli;
try {
  cli = await import('../dist/server/cli.js');
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('dist/server/cli.js')) {
    process.stderr.write('partner-api: the platform is not built: run npm run build\n');
    process.exit(1);
  }
  throw error;
}
// Not awaited: a command left with nothing to wait for ends with its own exit code, not Node's 13 for an unsettled top-level await.
cli.main();
