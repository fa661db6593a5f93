// Exact amounts: integers of the smallest unit everywhere inside; decimals only at the edges.
import { MAX_EXACT_INTEGER } from './exact-integer.js';

export const USDT_DECIMALS = 6;

/** A bigint amount as a JSON number; refuses one that a JSON number could not carry exactly. */
export function toJsonInteger(units: bigint): number {
  if (units < 0n || units > MAX_EXACT_INTEGER) throw new RangeError(`amount ${units} cannot be written exactly as a JSON number`);
  return Number(units);
}

/** Parses a decimal such as "12.5" into smallest units, exactly; undefined when it is not one. */
export function parseDecimalUnits(text: string, decimals = USDT_DECIMALS): bigint | undefined {
  const match = /^(\d{1,12})(?:\.(\d+))?$/.exec(text.trim());
  if (!match || (match[2] ?? '').length > decimals) return undefined;
  return BigInt(match[1]!) * 10n ** BigInt(decimals) + BigInt((match[2] ?? '').padEnd(decimals, '0'));
}

/**
 * A JSON number's text as the caller wrote it (`1.5`, `150`, `1.5e2`, `12.50000000`) in smallest units,
 * exactly: never through a double, which reads 1.9999999999999999 as 2. Undefined when it is negative or
 * its exact value is not a whole number of smallest units (more than `decimals` decimals once any
 * exponent is applied; trailing zeros do not count), or has more than 16 whole digits (JSON's exact
 * integers have 16 at most).
 */
export function parseJsonNumberUnits(text: string, decimals = USDT_DECIMALS): bigint | undefined {
  const match = /^(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(text);
  if (!match) return undefined;
  // The significant digits (no leading or trailing zeros), and how many of them are whole units.
  const written = match[1]! + (match[2] ?? '');
  const fromFirst = written.replace(/^0+/, '');
  const digits = fromFirst.replace(/0+$/, '');
  if (digits === '') return 0n;
  const whole = match[1]!.length - (written.length - fromFirst.length) + Number(match[3] ?? 0);
  if (digits.length - whole > decimals || whole > 16) return undefined;
  return BigInt(digits.padEnd(whole + decimals, '0'));
}

/** Smallest units as the decimal text of whole units, e.g. 12500000n → "12.5". */
export function formatDecimalUnits(units: bigint, decimals = USDT_DECIMALS): string {
  const scale = 10n ** BigInt(decimals);
  const fraction = (units % scale).toString().padStart(decimals, '0').replace(/0+$/, '');
  return fraction ? `${units / scale}.${fraction}` : `${units / scale}`;
}

/** The withdrawal amount on the wire: a JSON number of whole units, converted only here. */
export function unitsToWireNumber(units: bigint, decimals = USDT_DECIMALS): number {
  return Number(formatDecimalUnits(units, decimals));
}
