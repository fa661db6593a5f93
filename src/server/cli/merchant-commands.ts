// The operator's merchant commands: create one, its display name, its secrets, what it may withdraw.
import { canonicalAddress, payableAddressProblem } from '../addresses/derivation.js';
import { DuplicateMerchantNameError, MAX_GRACE_SECONDS } from '../merchants/merchants.js';
import { platformDateTime } from '../shared/time.js';
import { formatDecimalUnits } from '../shared/money.js';
import { NETWORKS } from '../shared/network.js';
import { changePolicy, type PolicyChange } from '../withdrawals/policy.js';
import { durationFlag, required, textFlag, type Flags } from './flags.js';
import type { Config } from '../config.js';
import { RefusedError, UsageError } from './errors.js';
import { JSON_FLAG, print, printCredentials, withPlatform, merchantOf, amountFlag, type Command, type Io } from './command.js';

/** How long a rotation's old secrets keep working unless told (as Stripe's webhook secrets). */
const DEFAULT_GRACE_SECONDS = 24 * 3600;
/** The merchant cache of every instance (http/authentication.ts): an ended grace period is over everywhere within it. */
const CACHE_BOUND_SECONDS = 30;
/** --display-name: what payers read on the payment page, so 1 to 100 characters without control characters. */
const displayNameFlag = (flags: Flags) => textFlag(flags, 'display-name', 100);
/** A limit's flag: an amount, `none` to remove the limit, or undefined when not given. */
function limitFlag(flags: Flags, name: string): bigint | null | undefined {
  if (flags[name] === undefined) return undefined;
  return flags[name] === 'none' ? null : amountFlag(flags, name);
}

/** merchants set-withdrawals' flags as a change of the policy; at least one must be given. */
function policyChange(flags: Flags): PolicyChange {
  if (flags.enabled && flags.disabled) throw new UsageError('give --enabled or --disabled, not both');
  const change: PolicyChange = {};
  if (flags.enabled || flags.disabled) change.enabled = Boolean(flags.enabled);
  const maxAmount = limitFlag(flags, 'max-amount');
  const dailyLimit = limitFlag(flags, 'daily-limit');
  const approveAbove = limitFlag(flags, 'approve-above');
  if (maxAmount !== undefined) change.maxAmount = maxAmount;
  if (dailyLimit !== undefined) change.dailyLimit = dailyLimit;
  if (approveAbove !== undefined) change.approveAbove = approveAbove;
  const addresses = flags['allow-address'];
  if (Array.isArray(addresses)) {
    change.allowedAddresses = addresses.includes('any') ? [] : addresses.map(allowedAddress);
    if (addresses.includes('any') && addresses.length > 1) throw new UsageError('--allow-address any allows every destination: give it alone');
  }
  if (Object.keys(change).length === 0) throw new UsageError('give at least one of --enabled, --disabled, --max-amount, --daily-limit, --allow-address, --approve-above');
  return change;
}

/**
 * A largest withdrawal under every network's minimum would refuse every withdrawal, silently (issue 57:
 * `--max-amount 0.5`): refused, as --disabled says that plainly. Under one network's minimum only, it
 * is allowed (a merchant may withdraw on the other) with a note of the network it closes.
 */
function refuseMaxUnderMinimums(maxAmount: bigint | null | undefined, config: Config, io: Io): void {
  if (maxAmount === undefined || maxAmount === null) return;
  const closed = NETWORKS.filter((network) => maxAmount < config.networks[network].minWithdrawal);
  const minimums = NETWORKS.map((network) => `${formatDecimalUnits(config.networks[network].minWithdrawal)} USDT on ${network}`).join(', ');
  if (closed.length === NETWORKS.length) throw new UsageError(`--max-amount ${formatDecimalUnits(maxAmount)} is under every network's minimum withdrawal (${minimums}): no withdrawal could be made; to refuse them all, say --disabled`);
  for (const network of closed) io.stderr.write(`partner-api: --max-amount ${formatDecimalUnits(maxAmount)} is under ${network}'s minimum withdrawal (${formatDecimalUnits(config.networks[network].minWithdrawal)} USDT): no withdrawal can be made on ${network}\n`);
}

/** An allowed destination, on either network, in the form the platform compares (EIP-55 on Ethereum). */
function allowedAddress(address: string): string {
  const network = address.startsWith('0x') ? 'Ethereum' : 'Tron';
  const problem = payableAddressProblem(network, address);
  if (problem) throw new UsageError(`--allow-address ${address} ${problem}`);
  return canonicalAddress(network, address);
}

export const MERCHANT_COMMANDS: Command[] = [
  {
    words: ['merchants', 'create'],
    summary: "creates a merchant and prints its API key, API secret and callback secret (shown once)",
    flags: {
      name: { value: 'NAME', description: "the merchant's name, 1 to 200 characters", required: true },
      'display-name': { value: 'TEXT', description: 'the name payers see on the payment page, 1 to 100 characters (none shown without it)' },
      json: JSON_FLAG,
    },
    example: 'partner-api merchants create --name "Acme Shop" --display-name "Acme" --json',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const name = textFlag(flags, 'name', 200);
      const displayName = flags['display-name'] === undefined ? undefined : displayNameFlag(flags);
      const created = await withPlatform(io, config, (p) => p.merchants.create(name, displayName, { uniqueName: true })).catch((error: unknown) => {
        if (!(error instanceof DuplicateMerchantNameError)) throw error;
        throw new RefusedError(`a merchant named ${JSON.stringify(name)} exists (API key ${error.apiKey}): names tell merchants apart in reports and logs; choose another --name`);
      });
      printCredentials(io, flags, created);
    },
  },
  {
    words: ['merchants', 'set-display-name'],
    summary: 'sets the name payers see on the payment page of a merchant\'s orders (or removes it with --clear)',
    flags: {
      'api-key': { value: 'KEY', description: "the merchant's API key", required: true },
      'display-name': { value: 'TEXT', description: 'the name payers see, 1 to 100 characters' },
      clear: { description: 'show no name' },
      json: JSON_FLAG,
    },
    example: 'partner-api merchants set-display-name --api-key pk_test_… --display-name "Acme"',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const apiKey = required(flags, 'api-key');
      if ((flags['display-name'] === undefined) === !flags.clear) throw new UsageError('give either --display-name or --clear');
      const displayName = flags.clear ? null : displayNameFlag(flags);
      const merchant = await withPlatform(io, config, (p) => p.merchants.setDisplayName(apiKey, displayName));
      if (!merchant) throw new RefusedError(`no merchant has the API key ${apiKey}`);
      print(io, flags, merchant, `name: ${merchant.name}\ndisplayName: ${merchant.displayName ?? '(none)'}`);
    },
  },
  {
    words: ['merchants', 'rotate-secrets'],
    summary: 'gives a merchant a new API secret and callback secret (printed once), working at once; the old ones keep working for the grace period',
    flags: {
      'api-key': { value: 'KEY', description: "the merchant's API key", required: true },
      grace: { value: 'DURATION', description: 'how long the old secrets keep working: 0 (not at all: a leak) to 7d, e.g. 90s, 30m, 24h (default 24h); callbacks carry both signatures meanwhile' },
      json: JSON_FLAG,
    },
    example: 'partner-api merchants rotate-secrets --api-key pk_test_… --grace 24h --json',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const apiKey = required(flags, 'api-key');
      const grace = durationFlag(flags, 'grace', DEFAULT_GRACE_SECONDS, MAX_GRACE_SECONDS);
      const credentials = await withPlatform(io, config, (p) => p.merchants.rotateSecrets(apiKey, grace));
      if (!credentials) throw new RefusedError(`no merchant has the API key ${apiKey}`);
      const until = credentials.previousSecretsValidUntil;
      printCredentials(io, flags, { ...credentials, previousSecretsValidUntil: until && platformDateTime(new Date(until)) });
    },
  },
  {
    words: ['merchants', 'end-grace'],
    summary: "ends a rotation's grace period now (an old secret leaked): only the current secrets work from here on",
    flags: { 'api-key': { value: 'KEY', description: "the merchant's API key", required: true }, json: JSON_FLAG },
    example: 'partner-api merchants end-grace --api-key pk_test_…',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const apiKey = required(flags, 'api-key');
      const result = await withPlatform(io, config, (p) => p.merchants.endGrace(apiKey));
      if (!result) throw new RefusedError(`no merchant has the API key ${apiKey}`);
      // The embedded database is one process's: the platform that ran this (or none) is the only
      // instance, and it forgot the merchant as the grace ended. On PostgreSQL, other instances keep a
      // merchant they read for up to 30 s.
      const everywhereBy = config.databaseUrl ? platformDateTime(new Date(Date.now() + CACHE_BOUND_SECONDS * 1000)) : undefined;
      const text = !result.ended
        ? `merchant ${result.name} had no grace period running: only its current secrets work`
        : everywhereBy
          ? `the old secrets of merchant ${result.name} are refused from now on by this database; instances that read the merchant before keep accepting them until ${everywhereBy} UTC at the latest (their ${CACHE_BOUND_SECONDS} s cache)`
          : `the old secrets of merchant ${result.name} are refused from now on`;
      print(io, flags, { name: result.name, apiKey, graceEnded: result.ended, ...(result.ended ? { refusedEverywhereBy: everywhereBy ?? platformDateTime(new Date()) } : {}) }, text);
    },
  },
  {
    words: ['merchants', 'set-withdrawals'],
    summary: "sets what a merchant may withdraw through the API: on or off (live mode: off until turned on), limits, allowed destinations, approval above an amount",
    flags: {
      'api-key': { value: 'KEY', description: "the merchant's API key", required: true },
      enabled: { description: 'allow withdrawals through the API' },
      disabled: { description: 'refuse withdrawals through the API (422 withdrawals_disabled)' },
      'max-amount': { value: 'AMOUNT', description: 'the largest withdrawal on either network, whole USDT (e.g. 500), or none' },
      'daily-limit': { value: 'AMOUNT', description: 'the most its withdrawals on both networks together may add up to in any 24 hours, whole USDT, or none' },
      'allow-address': { value: 'ADDR', description: 'allow only these destinations (repeat it for each; replaces the list); any: every destination', multiple: true },
      'approve-above': { value: 'AMOUNT', description: 'a withdrawal through the API of more than this, on either network, waits for withdrawals approve (whole USDT), or none; each withdrawal on its own, not their sum: five of 5 pass under 5 (the daily limit bounds a sum)' },
      json: JSON_FLAG,
    },
    example: 'partner-api merchants set-withdrawals --api-key pk_live_… --enabled --max-amount 5000 --daily-limit 20000 --approve-above 1000',
    runByRunningPlatform: true,
    async run(flags, config, io) {
      const apiKey = required(flags, 'api-key');
      const change = policyChange(flags);
      refuseMaxUnderMinimums(change.maxAmount, config, io);
      const policy = await withPlatform(io, config, async (p) => changePolicy(p.db, (await merchantOf(p, apiKey)).id, change));
      const shown = {
        enabled: policy.enabled,
        maxAmount: policy.maxAmount === undefined ? null : formatDecimalUnits(policy.maxAmount),
        dailyLimit: policy.dailyLimit === undefined ? null : formatDecimalUnits(policy.dailyLimit),
        approveAbove: policy.approveAbove === undefined ? null : formatDecimalUnits(policy.approveAbove),
        allowedAddresses: policy.allowedAddresses,
      };
      // Each line says its unit and how it is counted (withdrawals/requests.ts, policyVerdict): per withdrawal on
      // either network, or the merchant's withdrawals on both networks together; USDT on both.
      const usdt = (amount: string | null, counted: string, none: string) => (amount === null ? none : `${amount} USDT ${counted}`);
      const text = [
        `withdrawals through the API: ${policy.enabled ? 'enabled' : config.mode === 'sandbox' ? 'disabled (refused in live mode; this sandbox takes them, within the limits below)' : 'disabled (refused: 422 withdrawals_disabled)'}`,
        `largest withdrawal: ${usdt(shown.maxAmount, 'per withdrawal, on Tron and on Ethereum alike', 'no limit')}`,
        `daily limit: ${usdt(shown.dailyLimit, "in any 24 hours, the merchant's withdrawals on Tron and Ethereum together (PENDING and DONE)", 'no limit')}`,
        `approval above: ${usdt(shown.approveAbove, 'per withdrawal through the API, on Tron and on Ethereum alike', 'none needed')}`,
        `destinations: ${policy.allowedAddresses.length ? `only ${policy.allowedAddresses.join(', ')} (each on its own network)` : 'any, on either network'}`,
        'the limits and destinations hold for the operator\'s withdrawals create too (--override-policy --reason passes them over)',
      ].join('\n');
      print(io, flags, shown, text);
    },
  },
];
