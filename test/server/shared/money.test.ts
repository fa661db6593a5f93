// A withdrawal's amount as its JSON text wrote it (issue 53): exact, never through a double, which reads
// 1.9999999999999999 as 2. Exponents are taken where the exact value is whole smallest units (docs/decisions.md).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatDecimalUnits, parseJsonNumberUnits } from '../../../src/server/shared/money.js';

describe('parseJsonNumberUnits', () => {
  it.each([
    ['1.999999', 1_999_999n],
    ['12.5', 12_500_000n],
    ['12.50000000', 12_500_000n],
    ['0.000001', 1n],
    ['150', 150_000_000n],
    ['1.5e2', 150_000_000n],
    ['1.5E+2', 150_000_000n],
    ['2E0', 2_000_000n],
    ['100e-2', 1_000_000n],
    ['1.25e-1', 125_000n],
    ['1e-6', 1n],
    ['0', 0n],
    ['0.000e9', 0n],
    ['1000000000', 1_000_000_000_000_000n],
  ])('%s is %s smallest units', (text, units) => {
    expect(parseJsonNumberUnits(text)).toBe(units);
  });

  it.each(['1.9999999999999999', '1.0000001', '0.0000001', '1e-7', '1.5e-6', '-1', '-0', '1e99999999999999999999', '1e-99999999999999999999', '12345678901234567', '1.', '.5', '1e', 'NaN', ' 1', '1 ', '0x10', ''])('%j is refused', (text) => {
    expect(parseJsonNumberUnits(text)).toBeUndefined();
  });

  it('with 0 decimals: whole numbers of smallest units only', () => {
    expect(parseJsonNumberUnits('2500000', 0)).toBe(2_500_000n);
    expect(parseJsonNumberUnits('2.5e6', 0)).toBe(2_500_000n);
    expect(parseJsonNumberUnits('9007199254740991.0', 0)).toBe(9_007_199_254_740_991n);
    expect(parseJsonNumberUnits('1.0000000000000001', 0)).toBeUndefined();
  });

  it('reads back every amount of at most 6 decimals as formatDecimalUnits writes it, and as JSON.stringify writes its double', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: 0n, max: 10n ** 15n }), (units) => {
        const text = formatDecimalUnits(units);
        return parseJsonNumberUnits(text) === units && parseJsonNumberUnits(JSON.stringify(Number(text))) === units;
      }),
    );
  });
});
