// A database whose every statement, also those of a transaction (on PostgreSQL a fill runs in one), is
// shown to `before` first: to count or record them, or to fail one (when `before` throws).
import type { Database, Sql } from '../../src/server/db/database.js';

export function observedStatements(db: Database, before: (text: string) => void): Pick<Database, 'query' | 'queryBytes' | 'transaction'> {
  const shown = (text: string) => {
    try {
      before(text);
      return undefined;
    } catch (error) {
      return Promise.reject(error);
    }
  };
  // The methods as they are now: a test may put the observed ones in their place.
  const observed = ({ query, queryBytes }: Sql): Sql => ({
    query: (text, params, options) => shown(text) ?? query(text, params, options),
    queryBytes: (text, params, bytes, options) => shown(text) ?? queryBytes(text, params, bytes, options),
  });
  const { transaction } = db;
  return { ...observed(db), transaction: (work) => transaction((tx) => work(observed(tx))) };
}
