// Duplicate keys in JSON text (issue 50): the first key an object holds twice, escapes decoded, at any depth.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { firstDuplicateKey } from '../../../src/server/shared/json-keys.js';

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
