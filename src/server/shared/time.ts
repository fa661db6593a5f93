/** Clock in milliseconds, like Date.now; injected so that tests control time. */
export type Clock = () => number;

/** `YYYY-MM-DD HH:MM:SS` in UTC: the one date shape of the API. */
export function platformDateTime(date: Date): string {
  return date.toISOString().slice(0, 19).replace('T', ' ');
}
