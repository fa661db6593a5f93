// The shapes every setting's value is checked against: a bad value stops the start with a message that
// names the setting (and never repeats a value that may carry a key).
import { parseExactInteger } from '../shared/exact-integer.js';

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

/** A setting's text among a noun's `settings`: its flag, else its environment variable (a secret's: its variable or file). */
export type SettingGetter<Settings> = (name: keyof Settings & string) => string | undefined;

export function integer(name: string, text: string, min: number, max: number): number {
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new ConfigError(`${name} must be a whole number from ${min} to ${max}, got "${text}"`);
  }
  return Number(text);
}

export function amount(name: string, text: string): bigint {
  const units = parseExactInteger(text);
  if (units === undefined) {
    throw new ConfigError(`${name} must be a whole number of smallest units (USDT: 1000000 = 1 USDT), got "${text}"`);
  }
  return units;
}

/** An amount that must be at least one smallest unit. */
export function positiveAmount(name: string, text: string): bigint {
  const units = amount(name, text);
  if (units === 0n) throw new ConfigError(`${name} must be at least 1 smallest unit, got "${text}"`);
  return units;
}

export function rateLimit(text: string, name = 'RATE_LIMIT') {
  const match = /^(\d+)\/(\d+)$/.exec(text);
  if (!match) throw new ConfigError(`${name} must be "requests/seconds", e.g. 100/60, got "${text}"`);
  return { limit: integer(`${name} requests`, match[1]!, 1, 1_000_000), windowSeconds: integer(`${name} seconds`, match[2]!, 1, 86_400) };
}

/** A switch: true or false when set, undefined when not. */
export function optionalFlag(name: string, text: string | undefined): boolean | undefined {
  if (text === undefined) return undefined;
  if (text === 'false' || text === '0') return false;
  if (text === 'true' || text === '1') return true;
  throw new ConfigError(`${name} must be true or false, got "${text}"`);
}

/** An http(s) URL that may carry a key: checked when given, never repeated in an error. */
export function optionalUrl(name: string, text: string | undefined): string | undefined {
  return text === undefined ? undefined : rpcUrl(name, text);
}

/** An RPC URL may carry an API key or a password: errors never repeat it. */
export function rpcUrl(name: string, text: string): string {
  if (!URL.canParse(text) || !/^https?:$/.test(new URL(text).protocol)) throw new ConfigError(`${name} must be an http(s) URL`);
  return text;
}
