// What JSON.parse loses of a JSON text. Duplicate keys: JSON.parse keeps the last of two equal keys;
// another reader may keep the first. A signed body that two readers read two ways does not mean one
// thing, so the platform refuses it (issue 50) rather than pick one, as RFC 8259 ("names SHOULD be
// unique") and I-JSON (RFC 7493, "MUST NOT") would have it. And a number's digits as written: JSON.parse
// reads a double, which has rounded 1.9999999999999999 to 2 (issue 53).

/**
 * The first key that an object of `json` (text JSON.parse has accepted) holds twice, decoded (`"a"` and
 * `"\u0061"` are one key), or undefined. One pass over the text; strings other than keys are skipped.
 */
export function firstDuplicateKey(json: string): string | undefined {
  const open: (Set<string> | null)[] = []; // a set of keys for each object open, null for each array
  let keyNext = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      while (json.charCodeAt(end) !== QUOTE) end += json.charCodeAt(end) === BACKSLASH ? 2 : 1;
      const keys = open.at(-1);
      if (keys && keyNext) {
        const key = JSON.parse(json.slice(i, end + 1)) as string;
        if (keys.has(key)) return key;
        keys.add(key);
        keyNext = false;
      }
      i = end;
    } else if (c === OPEN_OBJECT) {
      open.push(new Set());
      keyNext = true;
    } else if (c === OPEN_ARRAY) {
      open.push(null);
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      open.pop();
      keyNext = false;
    } else if (c === COMMA) {
      keyNext = open.at(-1) != null;
    }
  }
  return undefined;
}

/**
 * The text of the number that the member `name` of the top-level object of `json` (text JSON.parse has
 * accepted) holds, as written (`1.50`, `15e-1`), or undefined: no such member, its value no number, or
 * `json` no object. Keys are compared decoded (`"\u0061mount"` is `amount`); the first such member is
 * taken (a body with a key twice is refused before: firstDuplicateKey).
 */
export function memberNumberText(json: string, name: string): string | undefined {
  const topIsObject = /^[ \t\n\r]*\{/.test(json);
  let depth = 0;
  let keyNext = false;
  for (let i = 0; i < json.length; i++) {
    const c = json.charCodeAt(i);
    if (c === QUOTE) {
      let end = i + 1;
      while (json.charCodeAt(end) !== QUOTE) end += json.charCodeAt(end) === BACKSLASH ? 2 : 1;
      if (topIsObject && depth === 1 && keyNext && JSON.parse(json.slice(i, end + 1)) === name) {
        NUMBER_VALUE.lastIndex = end + 1;
        return NUMBER_VALUE.exec(json)?.[1];
      }
      keyNext = false;
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      depth++;
      keyNext = c === OPEN_OBJECT;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
      keyNext = false;
    } else if (c === COMMA) {
      keyNext = true; // a key only where the comma is the top-level object's (depth 1)
    }
  }
  return undefined;
}

/** After a key: the colon and a JSON number (RFC 8259's grammar), whitespace around the colon. */
const NUMBER_VALUE = /[ \t\n\r]*:[ \t\n\r]*(-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?)/y;

const [QUOTE, BACKSLASH, OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY, COMMA] = ['"', '\\', '{', '}', '[', ']', ','].map((c) => c.charCodeAt(0)) as [number, number, number, number, number, number, number];
