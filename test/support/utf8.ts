// A byte column's value (Sql.queryBytes) as text, for a test to read before the rows are released.
import type { Utf8Text } from '../../src/server/db/database.js';

export function textOf(text: Utf8Text): string {
  return typeof text === 'string' ? text : Buffer.from(text).toString('utf8');
}
