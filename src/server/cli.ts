// The `partner-api` command: serve the platform, and the operator's commands.
import { isAddress } from './addresses.js';
import { ConfigError, configFrom, parseFlags, SETTING_OPTIONS, settingsHelp, type Config } from './config.js';
import { isUuid } from './ids.js';
import { parseDecimalUnits } from './money.js';
import type { MerchantCredentials } from './secrets.js';
import { openPlatform, type Platform } from './platform.js';
import { WITHDRAWAL_STATUSES, type WithdrawalStatus } from './withdrawals.js';
import { CALLBACK_STATES, formatCallback, listCallbacks, redeliverCallback, type CallbackState } from './callbacks/operator.js';
import { chainResumeCommand, depositsRescanCommand } from './chain/operator.js';

const USAGE = `usage:
  partner-api serve [--mode sandbox|live] [settings]
  partner-api merchants create --name NAME [--json] [settings]
  partner-api merchants rotate-secrets --api-key KEY [--json] [settings]
  partner-api withdrawals create --api-key KEY --external-id ID --amount 12.5 --blockchain Tron|Ethereum --destination-address ADDR [--json] [settings]
  partner-api withdrawals set-status --uuid UUID --status PENDING|DONE|FAILED [--json] [settings]
  partner-api callbacks list [--order UUID] [--state pending|delivered|gone|failed] [--limit N] [--json] [settings]
  partner-api callbacks redeliver --webhook-id ID [--json] [settings]
  partner-api deposits rescan --order UUID [--from-block N] [--json] [settings]
  partner-api chain resume --network tron|ethereum [--from-block N] [--json] [settings]

settings (flag, or environment variable):
${settingsHelp()}`;

class UsageError extends Error {}

type Flags = Record<string, string | boolean | undefined>;

function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

function print(flags: Flags, value: unknown, text: string) {
  process.stdout.write(flags.json ? JSON.stringify(value, null, 2) + '\n' : text + '\n');
}

/** A merchant's credentials, shown once: as JSON, or a line each. */
function printCredentials(flags: Flags, credentials: MerchantCredentials & { name: string }) {
  print(flags, credentials, Object.entries(credentials).map(([k, v]) => `${k}: ${v}`).join('\n'));
}

async function withPlatform<T>(config: Config, work: (platform: Platform) => Promise<T>): Promise<T> {
  const platform = await openPlatform(config, { logger: false });
  try {
    return await work(platform);
  } finally {
    await platform.close();
  }
}

function banner(config: Config, url: string, credentials: { apiKey: string; apiSecret: string; callbackSecret: string } | undefined) {
  const lines = [
    `Partner API (${config.mode} mode) listening on ${url}`,
    `  docs:      ${url}/docs`,
    `  contract:  ${url}/openapi.json`,
    `  database:  ${config.databaseUrl ? 'PostgreSQL (DATABASE_URL)' : `PGlite in ${config.dataDir}`}`,
  ];
  if (credentials) {
    lines.push(
      'Sandbox merchant (test credentials, never for real funds):',
      `  API key:          ${credentials.apiKey}`,
      `  API secret:       ${credentials.apiSecret}`,
      `  callback secret:  ${credentials.callbackSecret}`,
      'Deposit addresses come from the public "abandon … about" test wallet: UNSAFE for real funds.',
    );
  }
  lines.push('Ready. SIGTERM or Ctrl+C stops it gracefully.');
  process.stdout.write(lines.join('\n') + '\n');
}

async function serve(config: Config) {
  const platform = await openPlatform(config);
  let sandbox;
  if (config.mode === 'sandbox') {
    const merchant = (await platform.merchants.byName('sandbox')) ?? (await platform.merchants.byApiKey((await platform.merchants.create('sandbox')).apiKey));
    sandbox = platform.merchants.credentials(merchant!);
  }
  const address = await platform.app.fastify.listen({ host: config.host, port: config.port });
  banner(config, address.replace('[::1]', 'localhost'), sandbox);
  const log = platform.app.fastify.log;
  for (const [network, { chain }] of Object.entries(config.networks)) {
    if (chain) log.info({ network, rpc: new URL(chain.rpcUrl).origin, token: chain.tokenContract }, 'scanning deposits');
    else if (config.mode === 'live') log.warn({ network }, `no ${network.toUpperCase()}_RPC_URL: deposits on ${network} are not scanned`);
  }
  if (config.mode === 'live' && config.callbacks.allowPrivate) log.warn('ALLOW_PRIVATE_CALLBACKS is on: callbacks may reach private and loopback addresses (tests only)');
  try {
    await platform.startWorkers();
  } catch (error) {
    await platform.close();
    throw error;
  }

  let closing = false;
  const shutdown = async (signal: string) => {
    if (closing) return;
    closing = true;
    platform.app.fastify.log.info({ signal }, 'shutting down: finishing in-flight requests');
    await platform.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

async function run(argv: string[]) {
  const [command, sub, ...rest] = argv;
  if (command === 'serve') {
    await serve(configFrom(parseFlags([sub, ...rest].filter((a): a is string => a !== undefined), SETTING_OPTIONS), process.env));
    return;
  }
  const commandOptions = {
    ...SETTING_OPTIONS,
    json: { type: 'boolean' as const },
    name: { type: 'string' as const },
    'api-key': { type: 'string' as const },
    'external-id': { type: 'string' as const },
    amount: { type: 'string' as const },
    blockchain: { type: 'string' as const },
    'destination-address': { type: 'string' as const },
    uuid: { type: 'string' as const },
    status: { type: 'string' as const },
    order: { type: 'string' as const },
    state: { type: 'string' as const },
    limit: { type: 'string' as const },
    'webhook-id': { type: 'string' as const },
    'from-block': { type: 'string' as const },
    network: { type: 'string' as const },
  };
  const flags = parseFlags(rest, commandOptions);
  const config = configFrom(flags, process.env);

  if (command === 'merchants' && sub === 'create') {
    const name = required(flags, 'name');
    if (name.length > 200) throw new UsageError('--name must be at most 200 characters');
    const credentials = await withPlatform(config, (p) => p.merchants.create(name));
    printCredentials(flags, credentials);
    return;
  }
  if (command === 'merchants' && sub === 'rotate-secrets') {
    const apiKey = required(flags, 'api-key');
    const credentials = await withPlatform(config, (p) => p.merchants.rotateSecrets(apiKey));
    if (!credentials) throw new UsageError(`no merchant has the API key ${apiKey}`);
    printCredentials(flags, credentials);
    return;
  }
  if (command === 'withdrawals' && sub === 'create') {
    const amountUnits = parseDecimalUnits(required(flags, 'amount'));
    if (amountUnits === undefined || amountUnits === 0n || amountUnits > 1_000_000_000n * 1_000_000n) {
      throw new UsageError('--amount must be a positive decimal of whole USDT up to 1000000000 with at most 6 decimals, e.g. 12.5');
    }
    const blockchain = required(flags, 'blockchain');
    if (blockchain !== 'Tron' && blockchain !== 'Ethereum') throw new UsageError('--blockchain must be Tron or Ethereum');
    const destinationAddress = required(flags, 'destination-address');
    if (!isAddress(blockchain, destinationAddress)) throw new UsageError(`--destination-address is not a ${blockchain} address`);
    const externalId = required(flags, 'external-id');
    if (externalId.length > 128 || /[\u0000-\u001F\u007F]/.test(externalId)) throw new UsageError('--external-id must be 1 to 128 characters without control characters');
    const apiKey = required(flags, 'api-key');
    const withdrawal = await withPlatform(config, async (p) => {
      const merchant = await p.merchants.byApiKey(apiKey);
      if (!merchant) throw new UsageError(`no merchant has the API key ${apiKey}`);
      return p.withdrawals.create({ merchantId: merchant.id, externalId, amountUnits, blockchain, destinationAddress });
    });
    print(flags, withdrawal, `withdrawal ${withdrawal.uuid} created (${withdrawal.status})`);
    return;
  }
  if (command === 'withdrawals' && sub === 'set-status') {
    const uuid = required(flags, 'uuid');
    const status = required(flags, 'status') as WithdrawalStatus;
    if (!WITHDRAWAL_STATUSES.includes(status)) throw new UsageError(`--status must be one of ${WITHDRAWAL_STATUSES.join(', ')}`);
    if (!isUuid(uuid)) throw new UsageError('--uuid must be a withdrawal uuid');
    const result = await withPlatform(config, (p) => p.withdrawals.setStatus(uuid, status));
    if (result === undefined) throw new UsageError(`no withdrawal ${uuid}`);
    if (result === 'refused') throw new UsageError(`withdrawal ${uuid} is final and cannot move to ${status}`);
    print(flags, result, `withdrawal ${uuid} is ${result.status}`);
    return;
  }
  if (command === 'callbacks' && sub === 'list') {
    const state = flags.state as string | undefined;
    if (state !== undefined && !CALLBACK_STATES.includes(state as CallbackState)) throw new UsageError(`--state must be one of ${CALLBACK_STATES.join(', ')}`);
    const order = flags.order as string | undefined;
    if (order !== undefined && !isUuid(order)) throw new UsageError('--order must be an order uuid');
    const limit = Number(flags.limit ?? 50);
    if (!Number.isInteger(limit) || limit < 1 || limit > 10_000) throw new UsageError('--limit must be a whole number from 1 to 10000');
    const events = await withPlatform(config, (p) => listCallbacks(p.db, { state: state as CallbackState | undefined, order, limit }));
    print(flags, events, events.map(formatCallback).join('\n') || 'no callbacks');
    return;
  }
  if (command === 'callbacks' && sub === 'redeliver') {
    const webhookId = required(flags, 'webhook-id');
    const event = await withPlatform(config, (p) => redeliverCallback(p.db, webhookId, new Date()));
    if (!event) throw new UsageError(`no callback ${webhookId}`);
    print(flags, event, `callback ${webhookId} will be delivered again (same webhook-id)`);
    return;
  }
  if ((command === 'deposits' && sub === 'rescan') || (command === 'chain' && sub === 'resume')) {
    const work = command === 'chain' ? chainResumeCommand : depositsRescanCommand;
    const { value, text } = await withPlatform(config, (p) => work(p, flags, (message) => new UsageError(message)));
    print(flags, value, text);
    return;
  }
  throw new UsageError(command ? `unknown command: ${[command, sub].filter(Boolean).join(' ')}` : 'a command is required');
}

run(process.argv.slice(2)).catch((error: unknown) => {
  if (error instanceof UsageError) process.stderr.write(`partner-api: ${error.message}\n\n${USAGE}\n`);
  else if (error instanceof ConfigError) process.stderr.write(`partner-api: bad configuration: ${error.message}\n`);
  else process.stderr.write(`partner-api: ${(error as Error).message}\n`);
  process.exit(error instanceof UsageError ? 64 : 1);
});
