// Duplicate keys in JSON text. JSON.parse keeps the last of two equal keys; another reader may keep the
// first. A signed body that two readers read two ways does not mean one thing, so the platform refuses
// it (issue 50) rather than pick one, as RFC 8259 ("names SHOULD be unique") and I-JSON (RFC 7493,
// "MUST NOT") would have it.

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

const [QUOTE, BACKSLASH, OPEN_OBJECT, CLOSE_OBJECT, OPEN_ARRAY, CLOSE_ARRAY, COMMA] = ['"', '\\', '{', '}', '[', ']', ','].map((c) => c.charCodeAt(0)) as [number, number, number, number, number, number, number];
