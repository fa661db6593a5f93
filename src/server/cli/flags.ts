// Reading the operator commands' own flags: each check once, each refusal a UsageError naming the flag.
import type { Network } from '../addresses/derivation.js';
import { UsageError } from './errors.js';

export type Flags = Record<string, string | boolean | undefined>;

/** Networks as the contract spells them; typed in any case (`--network tron` too). */
export const NETWORK_VALUE = 'Tron|Ethereum';

export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

export function networkFlag(flags: Flags, name: string): Network {
  const text = typeof flags[name] === 'string' ? flags[name].toLowerCase() : '';
  if (text === 'tron') return 'Tron';
  if (text === 'ethereum') return 'Ethereum';
  throw new UsageError(`--${name} must be Tron or Ethereum`);
}

/** A date (`2026-11-01`, midnight UTC) or a date and time with its zone (`2026-11-01T12:00:00Z`). */
export function dateFlag(flags: Flags, name: string): Date | undefined {
  const text = flags[name];
  if (text === undefined) return undefined;
  const date = typeof text === 'string' && /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(text) ? new Date(text) : undefined;
  if (!date || Number.isNaN(date.getTime())) throw new UsageError(`--${name} must be a date such as 2026-11-01 or 2026-11-01T12:00:00Z`);
  return date;
}
