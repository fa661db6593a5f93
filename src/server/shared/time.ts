/** Clock in milliseconds, like Date.now; injected so that tests control time. */
export type Clock = () => number;

/** `YYYY-MM-DD HH:MM:SS` in UTC: the one date shape of the API. */
export function platformDateTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}

/** The API's date shape back to a Date, as UTC (a bare `new Date('YYYY-MM-DD HH:MM:SS')` reads local time). */
export function parsePlatformDateTime(text: string): Date {
  return new Date(`${text.replace(' ', 'T')}Z`);
}
