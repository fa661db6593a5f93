// The key-leak guard: everything a test captured (log lines, errors, output) searched for a private key
// in the forms a careless line would show it: hex in either case, with or without 0x (one search covers
// both), base64 and base64url of its bytes, and its bytes as util.inspect prints a Buffer
// (`<Buffer ac 09 …>`) or a Uint8Array or JSON array (`172, 9, …`, which inspect spreads over several
// lines). A test asserts the answer is empty.

/**
 * What of `captured` shows the key `keyHex` (64 hex digits, 0x allowed): each line that does, and each
 * captured text whose key is spread over several lines (reported by its first line).
 */
export function keyLeaks(captured: string | readonly string[], keyHex: string): string[] {
  const hex = keyHex.replace(/^0x/i, '').toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(hex)) throw new Error('keyLeaks takes the key as 64 hex digits');
  const bytes = Buffer.from(hex, 'hex');
  // Compared with whitespace taken out, so that `ac 09 74` and a column layout of numbers match too.
  const caseless = [hex];
  const exact = [bytes.toString('base64').replace(/=+$/, ''), bytes.toString('base64url'), [...bytes].join(',')];
  const shows = (text: string) => {
    const compact = text.replace(/\s+/g, '');
    const lower = compact.toLowerCase();
    return caseless.some((form) => lower.includes(form)) || exact.some((form) => compact.includes(form));
  };
  const leaks: string[] = [];
  for (const text of typeof captured === 'string' ? [captured] : captured) {
    const lines = text.split('\n').filter(shows);
    if (lines.length > 0) leaks.push(...lines);
    else if (shows(text)) leaks.push(`${text.split('\n')[0]} …`);
  }
  return leaks;
}
