// The one Clock type, declared in src/signing (shared with the client); re-exported for the server's files.
export type { Clock } from '../../signing/clock.js';

/** `YYYY-MM-DD HH:MM:SS` in UTC: the one date shape of the API. */
export function platformDateTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

/** The API's date shape back to a Date, as UTC (a bare `new Date('YYYY-MM-DD HH:MM:SS')` reads local time). */
export function parsePlatformDateTime(text: string): Date {
  return new Date(`${text.replace(' ', 'T')}Z`);
}
