// One table of a representation's fields, from which everything that writes it is made: the JSON text the
// database writes (a list page's items, copied to the response as they are), the columns a query selects,
// and the object TypeScript builds from a row (a create's answer, a callback's body). Written twice by
// hand, the two had to be kept equal by a test and a new field took six edits in three files; made from
// one table, a field is one row (docs/design.md#adding-a-field-to-the-order). Each text is built once,
// when its module loads: the statements are the ones written by hand before, as fast.

/**
 * How the database writes a field's value into JSON text:
 * - `as-is`: between quotes as it is, for text JSON never escapes (a uuid, a CHECKed word, digits from
 *   to_char, an address a migration keeps plain): no function called a row;
 * - `to_json`: escaped by to_json, which escapes what JSON.stringify escapes (text holds no lone surrogate);
 * - `number`: as it is, an integer column (within what a JSON number carries exactly: migration 013);
 * - `json`: JSON text already (a frozen body, another table's representation).
 */
export type JsonWriting = 'as-is' | 'to_json' | 'number' | 'json';

export interface JsonField<Row> {
  /** The contract's name of the field. */
  name: string;
  /** The value: an SQL expression (`o.` the row's table), written as `json` says. */
  sql?: { expression: string; json: JsonWriting };
  /** The row's property TypeScript reads the value from (selected as that column when `sql` is given). */
  column?: keyof Row & string;
  /** The value on the wire made of the column's (an amount's bigint as a JSON number); as it is without. */
  wire?: (value: never) => unknown;
  /** A value that never changes: written into the statement's text, and as it is by TypeScript. */
  constant?: number | string;
  /** Left out when null: the key with its value in SQL (`||` makes the pair null, concat skips it), the property in TypeScript. */
  optional?: true;
  /** The database writes the key only, last: the platform writes the value after it (a link whose key never reaches the database). */
  appended?: true;
}

/** An SQL string literal. */
function literal(text: string): string {
  return `'${text.replaceAll("'", "''")}'`;
}

/** A field's value in the database's JSON: the text before it, the expression, the text after it. */
function valueParts<Row>(field: JsonField<Row>): [before: string, expression: string, after: string] {
  const { expression, json } = field.sql!;
  if (json === 'as-is') return ['"', expression, '"'];
  if (json === 'to_json') return ['', `to_json(${expression})`, ''];
  return ['', expression, ''];
}

/**
 * The fields as one JSON object written by the database: `concat(…)` of the keys (adjacent texts joined
 * into one literal) and the values. An optional field is `key || value`, null when the value is, and
 * concat skips nulls. With an appended field last, the text ends with its key, open for the platform.
 */
export function jsonObjectSql<Row>(fields: readonly JsonField<Row>[]): string {
  const args: string[] = [];
  let text = '{';
  const flush = () => {
    if (text !== '') args.push(literal(text));
    text = '';
  };
  fields.forEach((field, index) => {
    const key = `${index === 0 ? '' : ','}"${field.name}":`;
    if (field.appended) {
      if (index !== fields.length - 1) throw new Error(`appended field ${field.name} is not the last`);
      text += key;
      return;
    }
    if (field.constant !== undefined) {
      text += key + JSON.stringify(field.constant);
      return;
    }
    if (!field.sql) throw new Error(`field ${field.name} has no SQL`);
    const [before, expression, after] = valueParts(field);
    if (field.optional) {
      flush();
      args.push([literal(key + before), expression, ...(after ? [literal(after)] : [])].join(' || '));
      return;
    }
    text += key + before;
    flush();
    args.push(expression);
    text = after;
  });
  if (!fields.at(-1)?.appended) text += '}';
  flush();
  return `concat(${args.join(', ')})`;
}

/** The columns a query selects for TypeScript to read the fields from, each once, in the table's order. */
export function selectedColumns<Row>(fields: readonly JsonField<Row>[]): string {
  const columns = new Map<string, string>();
  for (const field of fields) {
    if (!field.column || columns.has(field.column)) continue;
    const expression = field.sql?.expression ?? field.column;
    const plain = expression === field.column || expression.endsWith(`.${field.column}`);
    columns.set(field.column, plain ? expression : `${expression} AS ${field.column}`);
  }
  return [...columns.values()].join(', ');
}

/**
 * The representation TypeScript builds from a row: each field TypeScript reads (a column or a constant),
 * in the table's order, which is JSON.stringify's. Typed by the caller: the table, not the compiler, ties
 * the names to the contract, and a test holds them to generated/openapi.json.
 */
export function rowMapper<Row>(fields: readonly JsonField<Row>[]): (row: Row) => Record<string, unknown> {
  const read = fields.filter((field) => field.column !== undefined || field.constant !== undefined);
  return (row) => {
    const shown: Record<string, unknown> = {};
    for (const field of read) {
      if (field.constant !== undefined) {
        shown[field.name] = field.constant;
        continue;
      }
      const value = row[field.column!];
      if (value === null && field.optional) continue;
      shown[field.name] = field.wire ? field.wire(value as never) : value;
    }
    return shown;
  };
}
