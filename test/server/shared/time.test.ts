// The API's one date shape, both ways, whatever the host's time zone: an expired order's callback
// once said 14:00 for an order that expired at 17:00 UTC on a host in Moscow.
import { afterEach, describe, expect, it } from 'vitest';
import { parsePlatformDateTime, platformDateTime } from '../../../src/server/shared/time.js';

const hostZone = process.env.TZ;

describe('the API date shape', () => {
  afterEach(() => {
    if (hostZone === undefined) delete process.env.TZ;
    else process.env.TZ = hostZone;
  });

  it.each(['UTC', 'Europe/Moscow', 'America/Los_Angeles'])('reads and writes UTC on a host in %s', (zone) => {
    process.env.TZ = zone;
    const text = '2026-11-25 17:00:00';
    expect(parsePlatformDateTime(text).getTime()).toBe(Date.UTC(2026, 10, 25, 17, 0, 0));
    expect(platformDateTime(parsePlatformDateTime(text))).toBe(text);
  });

  it('reads UTC where a bare Date parse reads the local time, 3 h apart in Moscow', () => {
    process.env.TZ = 'Europe/Moscow';
    const text = '2026-11-25 17:00:00';
    // The bare parse is the mistake this module exists to avoid: ours must be 3 h later than it.
    expect(parsePlatformDateTime(text).getTime() - new Date(text).getTime()).toBe(3 * 3600_000);
  });

  it('writes the UTC day and hour, not the local ones, across local midnight', () => {
    process.env.TZ = 'Europe/Moscow';
    // 22:30 UTC is 01:30 the next day in Moscow: the shape must keep the UTC date.
    expect(platformDateTime(new Date(Date.UTC(2026, 10, 25, 22, 30, 5)))).toBe('2026-11-25 22:30:05');
  });
});
