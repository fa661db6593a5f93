// Reading the operator commands' own flags: each check once, each refusal a UsageError naming the flag.
import type { Network } from '../shared/network.js';
import { UsageError } from './errors.js';

export type Flags = Record<string, string | boolean | string[] | undefined>;

/** Networks as the contract spells them; typed in any case (`--blockchain tron` too). */
export const NETWORK_VALUE = 'Tron|Ethereum';

export function required(flags: Flags, name: string): string {
  const value = flags[name];
  if (typeof value !== 'string' || value === '') throw new UsageError(`--${name} is required`);
  return value;
}

/** A lone UTF-16 surrogate: text that is no Unicode (JSON can spell one, `"\\ud800"`). */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Whether an argument is text the database can keep as it was typed: no NUL (PostgreSQL's text refuses
 * it), no lone surrogate, and no U+FFFD, the mark that bytes which were not UTF-8 were replaced on the
 * way in (a terminal's argv, the operator socket's line): a name stored with it would not be the one
 * typed.
 */
export function isCleanText(text: string): boolean {
  return !text.includes('\u0000') && !text.includes('\uFFFD') && !LONE_SURROGATE.test(text);
}

/** A name or label an operator types: 1 to `max` characters, clean text, and no control characters. */
export function textFlag(flags: Flags, name: string, max: number): string {
  const text = required(flags, name);
  if (text.length > max || text.trim() === '' || /[\u0000-\u001F\u007F-\u009F]/.test(text) || !isCleanText(text)) {
    throw new UsageError(`--${name} must be 1 to ${max} characters of UTF-8 text without control characters`);
  }
  return text;
}

export function networkFlag(flags: Flags, name: string): Network {
  const text = typeof flags[name] === 'string' ? flags[name].toLowerCase() : '';
  if (text === 'tron') return 'Tron';
  if (text === 'ethereum') return 'Ethereum';
  throw new UsageError(`--${name} must be Tron or Ethereum`);
}

/**
 * A date (`2026-11-01`, midnight UTC), the API's date and time (`2026-11-01 12:00:00`, UTC, as the
 * commands print times), or a date and time with its zone (`2026-11-01T12:00:00Z`).
 */
export function dateFlag(flags: Flags, name: string): Date | undefined {
  const text = flags[name];
  if (text === undefined) return undefined;
  const iso = typeof text === 'string' && /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/.test(text) ? `${text.replace(' ', 'T')}Z` : text;
  const date = typeof iso === 'string' && /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,3})?)?(Z|[+-]\d{2}:\d{2}))?$/.test(iso) ? new Date(iso) : undefined;
  if (!date || Number.isNaN(date.getTime()) || !isCalendarDay(iso as string)) throw new UsageError(`--${name} must be a date such as 2026-11-01, 2026-11-01 12:00:00 (UTC) or 2026-11-01T12:00:00Z`);
  return date;
}

/**
 * The day written is one of the calendar's, of the years 1 to 9999: JavaScript rolls 2026-02-31 over
 * into March and counts a year 0, which PostgreSQL refuses (a usage error, not "the database refused").
 */
function isCalendarDay(text: string): boolean {
  const day = text.slice(0, 10);
  return day >= '0001-01-01' && new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10) === day;
}

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * A duration in whole seconds: `0`, or a whole number with its unit, `90s`, `30m`, `24h`, `7d`; from 0
 * to `maxSeconds`. `fallback` when the flag is absent.
 */
export function durationFlag(flags: Flags, name: string, fallback: number, maxSeconds: number): number {
  const text = flags[name];
  if (text === undefined) return fallback;
  const match = typeof text === 'string' ? /^(\d{1,9})(s|m|h|d)?$/.exec(text) : null;
  const seconds = match && (match[2] ? Number(match[1]) * DURATION_UNITS[match[2]]! : Number(match[1]) === 0 ? 0 : undefined);
  if (seconds === null || seconds === undefined || seconds > maxSeconds) {
    throw new UsageError(`--${name} must be 0 or a duration up to ${maxSeconds / 86_400}d with its unit, e.g. 90s, 30m, 24h, 7d`);
  }
  return seconds;
}
