import { loadConfig, SANDBOX_XPUBS, type Config } from '../src/server/config.js';

export { SANDBOX_XPUBS };

/** The sandbox defaults, for benchmarks that use the services in-process. */
export function testableConfig(): Config {
  return loadConfig([], { SECRET_KEY: Buffer.alloc(32, 7).toString('base64'), DATA_DIR: '/nonexistent' });
}
