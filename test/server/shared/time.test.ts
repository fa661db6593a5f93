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

  it('differs from a bare Date parse off UTC, which is why it exists', () => {
    process.env.TZ = 'Europe/Moscow';
    expect(new Date('2026-11-25 17:00:00').getTime()).not.toBe(Date.UTC(2026, 10, 25, 17, 0, 0));
  });
});
