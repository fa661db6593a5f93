/** The largest integer a JSON number (an IEEE double) carries exactly, 2^53 − 1: amounts and block numbers stay at or below it. */
export const MAX_EXACT_INTEGER = BigInt(Number.MAX_SAFE_INTEGER);

/** Whole-number text (digits only) as a bigint at most MAX_EXACT_INTEGER; undefined for anything else. */
export function parseExactInteger(text: string): bigint | undefined {
  if (!/^\d{1,16}$/.test(text)) return undefined;
  const value = BigInt(text);
  return value <= MAX_EXACT_INTEGER ? value : undefined;
}
