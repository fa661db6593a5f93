// Duplicate keys in JSON text (issue 50): the first key an object holds twice, escapes decoded, at any depth.
// And a top-level member's number as written (issue 53).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstDuplicateKey, memberNumberText } from '../../../src/server/shared/json-keys.js';

describe('firstDuplicateKey', () => {
  it.each([
    ['{"a":1,"a":2}', 'a'],
    ['{"a":1,"\\u0061":2}', 'a'],
    ['{"x":{"b":"a","b":[]}}', 'b'],
    ['[{"k":1},{"k":1,"k":2}]', 'k'],
    ['{"s":"{\\"a\\":1,\\"a\\":2}","a":{"a":1}}', undefined],
    ['{"a":[{"a":1}],"b":{"a":{"a":2}}}', undefined],
    ['{"":1," ":2,"":3}', ''],
    ['"a"', undefined],
    ['[1,"a","a"]', undefined],
  ])('%s → %s', (json, key) => {
    JSON.parse(json); // the text is JSON
    expect(firstDuplicateKey(json)).toBe(key);
  });

  it('finds none in what JSON.stringify writes, however nested', () => {
    fc.assert(fc.property(fc.jsonValue(), (value) => firstDuplicateKey(JSON.stringify(value)) === undefined));
  });
});

describe('memberNumberText', () => {
  it.each([
    ['{"amount":1.9999999999999999}', '1.9999999999999999'],
    ['{ "amount" :\n\t1.5e2 , "b":1}', '1.5e2'],
    ['{"\\u0061mount":12.50}', '12.50'],
    ['{"a":{"amount":1},"b":[{"amount":2},"amount",3],"c":"amount","amount":4}', '4'],
    ['{"a":"\\"amount\\":5","amount":-0.5E-3}', '-0.5E-3'],
    ['{"amount":"1.5"}', undefined],
    ['{"amount":[1]}', undefined],
    ['{"amounts":1}', undefined],
    ['{"a":{"amount":1}}', undefined],
    ['[{"amount":1}]', undefined],
    ['["x","amount",1]', undefined],
    ['1', undefined],
  ])('%s → %s', (json, text) => {
    JSON.parse(json); // the text is JSON
    expect(memberNumberText(json, 'amount')).toBe(text);
  });

  it("finds the number JSON.stringify wrote for a top-level member, whatever else the object holds", () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), fc.double({ noNaN: true, noDefaultInfinity: true }), (other, amount) => {
        const { amount: _, ...rest } = other;
        const json = JSON.stringify({ ...rest, amount });
        return memberNumberText(json, 'amount') === JSON.stringify(amount);
      }),
    );
  });
});
